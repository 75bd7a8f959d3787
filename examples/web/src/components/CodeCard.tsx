/** Code the model ran (a provider-executed `code_execution` tool part): the code, then
 * what it printed, or the error of a failed run. */
import { Icon } from './Icon';
import { status, type ToolPart } from './ToolCard';

type Code = { language?: string; code?: string };
type Ran = { outcome?: string; output?: string };

export function CodeCard({ part }: { part: ToolPart }) {
  const input = (part.input ?? {}) as Code;
  const { label, tone } = status(part);
  const language = (input.language ?? '').toLowerCase().replace('language_unspecified', '');
  return (
    <div className={`tool code tool-${tone}`} data-testid="tool-code_execution" data-state={part.state}>
      <div className="tool-head">
        <span className="tool-icon">
          <Icon name="code" />
        </span>
        <span className="tool-title">Code</span>
        {language && <code className="tool-name">{language}</code>}
        <span className={`badge badge-${tone}`}>{label}</span>
      </div>
      <pre className="code-source" data-testid="code">
        <code>{input.code ?? ''}</code>
      </pre>
      {part.state === 'output-available' && (
        <pre className="code-output" data-testid="code-output">
          {(part.output as Ran | undefined)?.output ?? ''}
        </pre>
      )}
      {part.state === 'output-error' && (
        <pre className="code-output code-error" data-testid="code-output">
          {part.errorText}
        </pre>
      )}
    </div>
  );
}

/** One message: text, reasoning, file, tool, code and workflow node parts, in order, then
 * its sources and Google Search suggestions. Text a parallel branch wrote names its agent
 * (`providerMetadata.adk.author`). */
import { CREDENTIAL_TOOL, INPUT_TOOL } from 'adk-asgi';
import { getToolName, isToolUIPart } from 'ai';

import type { AssistantMessage } from '../agent.gen';
import type { GroundingData } from 'adk-asgi';

import { CodeCard } from './CodeCard';
import { FileView } from './FileView';
import { SearchSuggestions, Sources, type SourcePart } from './Grounding';
import { Icon } from './Icon';
import { CredentialCard, InputCard, type PauseHandlers } from './PauseCard';
import { ToolCard, type ToolPart } from './ToolCard';

function authorOf(part: { providerMetadata?: Record<string, Record<string, unknown>> }) {
  const author = part.providerMetadata?.adk?.author;
  return typeof author === 'string' ? author : null;
}

export function MessageView({
  message,
  streaming,
  onAnswer,
  pauses,
}: {
  message: AssistantMessage;
  streaming: boolean;
  onAnswer: (part: ToolPart, approved: boolean) => void;
  pauses: PauseHandlers;
}) {
  const sources = message.parts.filter(
    (part): part is SourcePart => part.type === 'source-url' || part.type === 'source-document',
  );
  return (
    <div className={`message message-${message.role}`} data-testid="message" data-role={message.role}>
      <div className="avatar">
        <Icon name={message.role === 'user' ? 'user' : 'spark'} />
      </div>
      <div className="bubble">
        {message.parts.map((part, index) => {
          if (part.type === 'text') {
            // A streamed text its final response replaced (docs/your-own-agents.md): the
            // history holds only the final text, so the page skips it too.
            if (part.providerMetadata?.adk?.replaced === true) return null;
            const author = authorOf(part);
            return (
              <p key={index} className="text" data-testid="text" data-author={author ?? undefined}>
                {author && <span className="author">{author}</span>}
                {part.text}
                {streaming && part.state === 'streaming' && <span className="caret" />}
              </p>
            );
          }
          if (part.type === 'reasoning') {
            return (
              <details key={index} className="reasoning" data-testid="reasoning" open={part.state === 'streaming'}>
                <summary>{part.state === 'streaming' ? 'Thinking…' : 'Thought'}</summary>
                <p>{part.text}</p>
              </details>
            );
          }
          if (part.type === 'file') {
            return <FileView key={index} part={part} />;
          }
          if (isToolUIPart(part)) {
            const name = getToolName(part);
            if (name === INPUT_TOOL) return <InputCard key={part.toolCallId} part={part as ToolPart} handlers={pauses} />;
            if (name === CREDENTIAL_TOOL) {
              return <CredentialCard key={part.toolCallId} part={part as ToolPart} handlers={pauses} />;
            }
            return name === 'code_execution' ? (
              <CodeCard key={part.toolCallId} part={part as ToolPart} />
            ) : (
              <ToolCard key={part.toolCallId} part={part as ToolPart} onAnswer={onAnswer} />
            );
          }
          if (part.type === 'data-node') {
            const { node, output } = part.data;
            return (
              <div key={index} className="node" data-testid="node-output" data-node={node}>
                <span className="node-name">{node}</span>
                <pre>{JSON.stringify(output, null, 2)}</pre>
              </div>
            );
          }
          if (part.type === 'data-grounding') {
            return <SearchSuggestions key={index} data={part.data as GroundingData} />;
          }
          return null;
        })}
        <Sources parts={sources} />
      </div>
    </div>
  );
}

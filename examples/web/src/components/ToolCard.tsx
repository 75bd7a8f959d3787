/** A tool call, rendered by its state; the approval question when it needs one. */
import { getToolName, type ToolUIPart, type DynamicToolUIPart } from 'ai';

import { Icon, type IconName } from './Icon';

export type ToolPart = ToolUIPart | DynamicToolUIPart;

type Args = Record<string, unknown>;

const TITLES: Record<string, { icon: IconName; title: string }> = {
  get_weather: { icon: 'sun', title: 'Weather' },
  process_payment: { icon: 'card', title: 'Payment' },
  get_location: { icon: 'pin', title: 'Location' },
  change_bgm: { icon: 'music', title: 'Background music' },
};

function summary(name: string, input: Args): string {
  switch (name) {
    case 'get_weather':
      return String(input.location ?? '');
    case 'process_payment':
      return `${input.amount ?? '?'} ${input.currency ?? ''} → ${input.recipient ?? '?'}`;
    case 'get_location':
      return 'your position, from this browser';
    case 'change_bgm':
      return `track ${input.track ?? '?'}, played in this browser`;
    default:
      return JSON.stringify(input);
  }
}

function question(name: string, input: Args): string {
  switch (name) {
    case 'process_payment':
      return `Send ${input.amount} ${input.currency ?? ''} to ${input.recipient}?`;
    case 'get_location':
      return 'Share your location with the assistant?';
    default:
      return `Allow ${name} to run?`;
  }
}

function result(name: string, output: Args): string {
  switch (name) {
    case 'get_weather':
      if (output.condition === undefined) return JSON.stringify(output); // another agent's tool
      return `${output.condition}, ${output.temperature_c}°C · humidity ${output.humidity_percent}%`;
    case 'process_payment':
      return output.status === 'success'
        ? `Sent ${output.amount} ${output.currency} to ${output.recipient} · ${output.transaction_id}`
        : String(output.error ?? JSON.stringify(output));
    case 'get_location':
      return `${output.latitude}, ${output.longitude}${output.accuracy != null ? ` (±${output.accuracy} m)` : ''}`;
    case 'change_bgm':
      return `Playing track ${output.track}`;
    default:
      return JSON.stringify(output);
  }
}

export function status(part: ToolPart): { label: string; tone: string } {
  const browser = part.providerExecuted !== true;
  switch (part.state) {
    case 'input-streaming':
      return { label: 'Preparing', tone: 'busy' };
    case 'input-available':
      return { label: browser ? 'Running in your browser' : 'Running', tone: 'busy' };
    case 'approval-requested':
      return { label: 'Needs your approval', tone: 'ask' };
    case 'approval-responded':
      return part.approval.approved
        ? { label: browser ? 'Approved · running in your browser' : 'Approved · running', tone: 'busy' }
        : { label: 'Denied', tone: 'denied' };
    case 'output-available':
      // A server call's interim result (a long-running tool, one waiting for the user).
      if ((part as { preliminary?: boolean }).preliminary === true) return { label: 'Waiting', tone: 'busy' };
      return { label: 'Done', tone: 'done' };
    case 'output-error':
      return { label: 'Failed', tone: 'error' };
    case 'output-denied':
      return { label: 'Denied', tone: 'denied' };
    default:
      return { label: String((part as { state: string }).state), tone: 'busy' };
  }
}

export function ToolCard({
  part,
  onAnswer,
}: {
  part: ToolPart;
  onAnswer: (part: ToolPart, approved: boolean) => void;
}) {
  const name = getToolName(part);
  const input = (part.input ?? {}) as Args;
  const { icon, title } = TITLES[name] ?? { icon: 'tool' as const, title: name };
  const { label, tone } = status(part);
  return (
    <div className={`tool tool-${tone}`} data-testid={`tool-${name}`} data-state={part.state}>
      <div className="tool-head">
        <span className="tool-icon">
          <Icon name={icon} />
        </span>
        <span className="tool-title">{title}</span>
        <code className="tool-name">{name}</code>
        <span className={`badge badge-${tone}`}>{label}</span>
      </div>
      <div className="tool-summary">{summary(name, input)}</div>
      {part.state === 'approval-requested' && (
        <div className="approval" role="group" aria-label="Approval">
          <span className="approval-question">{question(name, input)}</span>
          <div className="approval-buttons">
            <button className="btn btn-approve" onClick={() => onAnswer(part, true)}>
              Approve
            </button>
            <button className="btn btn-deny" onClick={() => onAnswer(part, false)}>
              Deny
            </button>
          </div>
        </div>
      )}
      {part.state === 'output-available' && (
        <div className="tool-result" data-testid="tool-result">
          {result(name, (part.output ?? {}) as Args)}
        </div>
      )}
      {part.state === 'output-error' && <div className="tool-error">{part.errorText}</div>}
      {(part.state === 'output-available' || part.state === 'output-error') && (
        <details className="tool-raw">
          <summary>raw</summary>
          <pre>{JSON.stringify({ input: part.input, output: part.state === 'output-available' ? part.output : undefined }, null, 2)}</pre>
        </details>
      )}
    </div>
  );
}

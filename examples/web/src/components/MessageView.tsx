/** One message: text, reasoning, file and tool parts, in order. */
import { CREDENTIAL_TOOL, INPUT_TOOL } from 'adk-asgi';
import { getToolName, isToolUIPart, type UIMessage } from 'ai';

import { FileView } from './FileView';
import { Icon } from './Icon';
import { CredentialCard, InputCard, type PauseHandlers } from './PauseCard';
import { ToolCard, type ToolPart } from './ToolCard';

export function MessageView({
  message,
  streaming,
  onAnswer,
  pauses,
}: {
  message: UIMessage;
  streaming: boolean;
  onAnswer: (part: ToolPart, approved: boolean) => void;
  pauses: PauseHandlers;
}) {
  return (
    <div className={`message message-${message.role}`} data-testid="message" data-role={message.role}>
      <div className="avatar">
        <Icon name={message.role === 'user' ? 'user' : 'spark'} />
      </div>
      <div className="bubble">
        {message.parts.map((part, index) => {
          if (part.type === 'text') {
            return (
              <p key={index} className="text" data-testid="text">
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
            return <ToolCard key={part.toolCallId} part={part as ToolPart} onAnswer={onAnswer} />;
          }
          return null;
        })}
      </div>
    </div>
  );
}

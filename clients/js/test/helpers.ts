/** What the package's tests share: an in-memory `ChatState` for the AI SDK's `AbstractChat`. */
import type { ChatState, ChatStatus, UIMessage } from 'ai';

export class MemoryState<M extends UIMessage = UIMessage> implements ChatState<M> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: M[] = [];
  pushMessage = (message: M) => {
    this.messages = this.messages.concat(structuredClone(message));
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: M) => {
    this.messages = [
      ...this.messages.slice(0, index),
      structuredClone(message),
      ...this.messages.slice(index + 1),
    ];
  };
  snapshot = <T>(value: T): T => (value === undefined ? value : structuredClone(value));
}

export const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

export function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? [])
    .map(p => (p.type === 'text' ? (p as { text: string }).text : ''))
    .join('');
}

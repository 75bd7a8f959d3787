/** The approval helper, type-checked against ai 6 and 7 (ai 5 has no tool approvals). */
import { AbstractChat, isToolUIPart, type ChatState } from 'ai';
import { answerApproval, type AdkUIMessage, type ApprovalTarget } from 'adk-asgi';

declare const state: ChatState<AdkUIMessage>;
class MyChat extends AbstractChat<AdkUIMessage> {}
const chat = new MyChat({ state });

async function onApprove(approved: boolean): Promise<boolean> {
  const part = chat.messages.at(-1)?.parts.find(isToolUIPart);
  if (part == null || part.state !== 'approval-requested') return false;
  const fromUseChat: ApprovalTarget = {
    addToolApprovalResponse: chat.addToolApprovalResponse,
    addToolOutput: chat.addToolOutput,
  };
  await answerApproval(fromUseChat, part, approved);
  return answerApproval(chat, part, approved, {
    tools: { get_location: async () => ({ latitude: 1, longitude: 2 }) },
    reason: approved ? undefined : 'no',
  });
}

void onApprove;

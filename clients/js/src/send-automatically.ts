import { isToolUIPart, type UIMessage } from 'ai';

/**
 * `sendAutomaticallyWhen` for adk-asgi: continue the assistant message once every
 * tool call of its last step is answered, and something was answered by the page.
 *
 * The AI SDK's `lastAssistantMessageIsCompleteWithApprovalResponses` and
 * `lastAssistantMessageIsCompleteWithToolCalls` combined, with one difference: an
 * *approved browser tool* (e.g. `get_location`) is not answered until the page
 * has run it and added its output, so the approval and the result go to the
 * server in one request (the server accepts them apart too, at the cost of one
 * more round trip). Server calls that are still running (a long-running tool, a tool
 * waiting for the user's credential) do not hold the answers back, as in the stock
 * helper.
 */
export function lastAssistantMessageIsCompleteWithAnswers({
  messages,
}: {
  messages: UIMessage[];
}): boolean {
  const message = messages[messages.length - 1];
  if (message == null || message.role !== 'assistant') return false;
  let lastStepStart = -1;
  message.parts.forEach((part, index) => {
    if (part.type === 'step-start') lastStepStart = index;
  });
  const calls = message.parts.slice(lastStepStart + 1).filter(isToolUIPart);
  if (calls.length === 0) return false;
  let answeredByPage = false;
  for (const part of calls) {
    const browserTool = part.providerExecuted !== true;
    const running =
      part.state === 'input-available' ||
      (part.state === 'output-available' && (part as { preliminary?: boolean }).preliminary === true);
    if (!browserTool && running) continue; // the server's, not the page's, to answer
    switch (part.state) {
      case 'output-available':
        if ((part as { preliminary?: boolean }).preliminary === true) return false;
        if (browserTool) answeredByPage = true;
        break;
      case 'output-error':
        if (browserTool) answeredByPage = true;
        break;
      case 'output-denied':
        break;
      case 'approval-responded':
        // Approved browser tools still owe their output; denials are complete.
        if (browserTool && part.approval.approved) return false;
        answeredByPage = true;
        break;
      default:
        return false; // still streaming, running, or waiting for the user
    }
  }
  return answeredByPage;
}

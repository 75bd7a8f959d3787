/**
 * Browser-executed tools and approvals: run a tool in the page and add its output to
 * the chat, and answer an approval request (running the tool in the page when the
 * user approved one that executes here).
 */

/** Browser implementations of tools, by tool name; each gets the call's input. */
export type BrowserTools = Record<string, (input: never) => unknown>;

/**
 * What the helpers need of a chat: an AI SDK `Chat` / `AbstractChat`, or the
 * functions `useChat()` returns (`{ addToolOutput, addToolApprovalResponse }`).
 */
export interface ToolAnswerTarget {
  addToolOutput(
    output:
      | { tool: string; toolCallId: string; output: unknown }
      | { state: 'output-error'; tool: string; toolCallId: string; errorText: string },
  ): unknown;
}

export interface ApprovalTarget extends ToolAnswerTarget {
  addToolApprovalResponse(response: { id: string; approved: boolean; reason?: string }): unknown;
}

/** The fields of a tool call (`onToolCall`'s `toolCall`) the helpers read. */
export interface BrowserToolCall {
  toolName: string;
  toolCallId: string;
  input: unknown;
}

/** The fields of a tool part (`ToolUIPart` or `DynamicToolUIPart`) the helpers read. */
export interface ApprovalToolPart {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  toolName?: string;
  providerExecuted?: boolean;
  approval?: { id: string };
}

/** The tool's name: `tool-get_location` → `get_location` (dynamic tools carry it). */
export function toolNameOf(part: { type: string; toolName?: string }): string {
  if (part.type === 'dynamic-tool' && part.toolName != null) return part.toolName;
  return part.type.startsWith('tool-') ? part.type.slice('tool-'.length) : part.type;
}

/**
 * Run a browser tool and add its output to the chat: `output-available` with what
 * it returned, or `output-error` with the message of what it threw (and when
 * `tools` has no implementation for it). Never throws for the tool's failure: the
 * model is told about it instead.
 *
 * ```ts
 * onToolCall: ({ toolCall }) => { void runBrowserTool(chat, toolCall, { change_bgm: playTrack }); }
 * ```
 */
export async function runBrowserTool(
  chat: ToolAnswerTarget,
  call: BrowserToolCall,
  tools: BrowserTools,
): Promise<void> {
  const tool = call.toolName;
  const toolCallId = call.toolCallId;
  const execute = Object.hasOwn(tools, tool) ? tools[tool] : undefined;
  if (execute == null) {
    await chat.addToolOutput({
      state: 'output-error',
      tool,
      toolCallId,
      errorText: `No browser implementation of the tool ${tool}.`,
    });
    return;
  }
  let output: unknown;
  try {
    output = await execute(call.input as never);
  } catch (error) {
    await chat.addToolOutput({
      state: 'output-error',
      tool,
      toolCallId,
      errorText: error instanceof Error ? error.message : String(error),
    });
    return;
  }
  await chat.addToolOutput({ tool, toolCallId, output });
}

/**
 * Answer a tool part waiting in `approval-requested` (an Approve / Deny button). When
 * the user approves a tool that runs in the browser (not `providerExecuted`), it is run
 * with its entry in `tools` and its output (or error) is added, so that
 * `lastAssistantMessageIsCompleteWithAnswers` sends the approval and the result in one
 * request. A part in any other state (a second click) is left alone: returns false.
 *
 * ```ts
 * <button onClick={() => answerApproval(chat, part, true, { tools: { get_location: getLocation } })}>
 * ```
 */
export async function answerApproval(
  chat: ApprovalTarget,
  part: ApprovalToolPart,
  approved: boolean,
  options: { tools?: BrowserTools; reason?: string } = {},
): Promise<boolean> {
  if (part.state !== 'approval-requested' || part.approval == null) return false;
  const response: { id: string; approved: boolean; reason?: string } = { id: part.approval.id, approved };
  if (options.reason != null) response.reason = options.reason;
  await chat.addToolApprovalResponse(response);
  if (approved && part.providerExecuted !== true) {
    await runBrowserTool(
      chat,
      { toolName: toolNameOf(part), toolCallId: part.toolCallId, input: part.input },
      options.tools ?? {},
    );
  }
  return true;
}

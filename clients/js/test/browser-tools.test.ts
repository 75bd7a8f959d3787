/**
 * runBrowserTool, answerApproval, lastAssistantMessageIsCompleteWithAnswers and the
 * typed metadata against a real `adk-asgi serve`, over SSE (the stock
 * `DefaultChatTransport`) and the live WebSocket (`AdkLiveTransport`), with the
 * `AbstractChat` of ai 5, 6 and 7 (one Vitest project each).
 */
import * as ai from 'ai';
import type { ChatTransport, UIMessage } from 'ai';
import { describe, expect, expectTypeOf, inject, it } from 'vitest';
import WebSocket from 'ws';

import { answerApproval, runBrowserTool, type BrowserTools } from '../src/browser-tools';
import { AdkLiveTransport, type WebSocketConstructor } from '../src/live-transport';
import { lastAssistantMessageIsCompleteWithAnswers } from '../src/send-automatically';
import { adkToolCallMetadata, type AdkUIMessage } from '../src/types';
import { MemoryState, sleep, textOf } from './helpers';

const serverUrl = inject('serverUrl');
const aiPackage = inject('aiPackage');
const hasApprovals = aiPackage !== 'ai5'; // ai 5 has no tool-approval chunks
let chatCounter = 0;

class TestChat extends ai.AbstractChat<AdkUIMessage> {}

type ToolPart = Parameters<typeof answerApproval>[1] & {
  output?: unknown;
  errorText?: string;
  input?: Record<string, unknown>;
  callProviderMetadata?: unknown;
};

interface Harness {
  chat: TestChat;
  state: MemoryState<AdkUIMessage>;
  /** The last message of every request the page sent (POST body / `message` frame). */
  sent: UIMessage[];
  errors: string[];
  idle(): Promise<void>;
  close(): void;
}

function harness(
  wire: 'sse' | 'live',
  onToolCall?: (chat: TestChat, call: { toolName: string; toolCallId: string; input: unknown }) => void,
): Harness {
  const sent: UIMessage[] = [];
  let lastActivity = Date.now();
  let transport: ChatTransport<AdkUIMessage>;
  let close = () => {};
  if (wire === 'sse') {
    transport = new ai.DefaultChatTransport<AdkUIMessage>({
      api: `${serverUrl}/api/chat`,
      fetch: async (input, init) => {
        lastActivity = Date.now();
        const body = JSON.parse(String(init?.body)) as { messages: UIMessage[] };
        sent.push(body.messages[body.messages.length - 1]);
        return fetch(input, init);
      },
    });
  } else {
    class RecordingWebSocket extends WebSocket {
      constructor(url: string) {
        super(url);
        this.on('message', () => {
          lastActivity = Date.now();
        });
      }
      override send(data: unknown): void {
        lastActivity = Date.now();
        const frame = typeof data === 'string' ? JSON.parse(data) : null;
        if (frame?.type === 'message') sent.push(frame.data.messages[0]);
        super.send(data as string);
      }
    }
    const live = new AdkLiveTransport<AdkUIMessage>({
      url: `${serverUrl}/api/chat`,
      webSocket: RecordingWebSocket as unknown as WebSocketConstructor,
      onServerTurn: () => void chat.resumeStream(),
    });
    transport = live;
    close = () => live.close();
  }
  const state = new MemoryState<AdkUIMessage>();
  const errors: string[] = [];
  const chat: TestChat = new TestChat({
    id: `tools-${wire}-${aiPackage}-${++chatCounter}-${Date.now()}`,
    state,
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithAnswers,
    onError: error => errors.push(error.message),
    onToolCall: ({ toolCall }) => {
      lastActivity = Date.now();
      onToolCall?.(chat, toolCall as { toolName: string; toolCallId: string; input: unknown });
    },
  });
  return {
    chat,
    state,
    sent,
    errors,
    close,
    async idle() {
      const deadline = Date.now() + 20_000;
      await sleep(20);
      while ((chat.status !== 'ready' && chat.status !== 'error') || Date.now() - lastActivity < 250) {
        if (Date.now() > deadline) throw new Error(`timeout; status ${chat.status}`);
        await sleep(20);
      }
    },
  };
}

function lastAssistant(h: Harness): AdkUIMessage {
  const message = h.state.messages.filter(m => m.role === 'assistant').at(-1);
  expect(message, 'an assistant message').toBeDefined();
  return message!;
}

function toolPart(message: AdkUIMessage, name: string): ToolPart {
  const part = message.parts.find(p => p.type === `tool-${name}`) as ToolPart | undefined;
  expect(part, `a tool-${name} part`).toBeDefined();
  return part!;
}

const HERE = { latitude: 35.6812, longitude: 139.7671, accuracy: 10 };

describe.each(['sse', 'live'] as const)(`browser tools over %s with ${aiPackage}`, wire => {
  it('runBrowserTool adds what the tool returned, and the model answers it', async () => {
    const inputs: unknown[] = [];
    const tools: BrowserTools = {
      change_bgm: (input: { track: number }) => {
        inputs.push(input);
        return { success: true, track: input.track };
      },
    };
    const h = harness(wire, (chat, call) => void runBrowserTool(chat, call, tools));
    await h.chat.sendMessage({ text: 'Play track 2' });
    await h.idle();
    expect(h.errors).toEqual([]);
    expect(inputs).toEqual([{ track: 2 }]);
    const message = lastAssistant(h);
    expect(toolPart(message, 'change_bgm')).toMatchObject({ state: 'output-available', output: { track: 2 } });
    expect(textOf(message)).toContain('Now playing track 2.');
    expect(h.sent).toHaveLength(2); // the question, then the tool's output
    h.close();
  });

  it.each([
    ['throws', { change_bgm: async () => Promise.reject(new Error('the speaker is unplugged')) }, 'the speaker is unplugged'],
    ['is missing', {}, 'No browser implementation of the tool change_bgm.'],
  ] as const)('runBrowserTool reports a tool that %s as output-error', async (_case, tools, errorText) => {
    const h = harness(wire, (chat, call) => void runBrowserTool(chat, call, tools as BrowserTools));
    await h.chat.sendMessage({ text: 'Play track 3' });
    await h.idle();
    expect(h.errors).toEqual([]);
    const message = lastAssistant(h);
    expect(toolPart(message, 'change_bgm')).toMatchObject({ state: 'output-error', errorText });
    expect(textOf(message)).toContain(`I could not change the music: ${errorText}`);
    h.close();
  });

  it.runIf(hasApprovals)('answerApproval: approve a browser tool, which runs; approval and result go together', async () => {
    const h = harness(wire);
    await h.chat.sendMessage({ text: 'Where am I?' });
    await h.idle();
    const asked = toolPart(lastAssistant(h), 'get_location');
    expect(asked.state).toBe('approval-requested');
    let ran = 0;
    const answered = await answerApproval(h.chat, asked, true, {
      tools: { get_location: () => (ran++, HERE) },
    });
    expect(answered).toBe(true);
    await h.idle();
    expect(h.errors).toEqual([]);
    expect(ran).toBe(1);
    const message = lastAssistant(h);
    expect(toolPart(message, 'get_location')).toMatchObject({ state: 'output-available', output: HERE });
    expect(textOf(message)).toContain('You are at latitude 35.6812, longitude 139.7671.');
    expect(h.sent).toHaveLength(2); // one request carried the approval and the result
    const answer = h.sent[1].parts.find(p => p.type === 'tool-get_location') as ToolPart;
    expect(answer).toMatchObject({ approval: { approved: true } });
    expect(await answerApproval(h.chat, toolPart(lastAssistant(h), 'get_location'), true)).toBe(false);
    h.close();
  });

  it.runIf(hasApprovals)('answerApproval: deny a payment (nothing runs in the page), with a reason', async () => {
    const h = harness(wire);
    await h.chat.sendMessage({ text: 'Send 50 dollars to Hanako' });
    await h.idle();
    const asked = toolPart(lastAssistant(h), 'process_payment');
    expect(asked).toMatchObject({ state: 'approval-requested', providerExecuted: true });
    // the tool's confirmation metadata is on the part, typed
    const adk = adkToolCallMetadata(asked);
    expect(adk?.approvalId).toBe(asked.approval?.id);
    expect(adk?.hint).toContain('process_payment');
    expect(await answerApproval(h.chat, asked, false, { reason: 'not today' })).toBe(true);
    await h.idle();
    expect(h.errors).toEqual([]);
    const message = lastAssistant(h);
    expect(toolPart(message, 'process_payment').state).toBe('output-denied');
    expect(textOf(message)).toContain('The payment to Hanako was cancelled.');
    const answer = h.sent[1].parts.find(p => p.type === 'tool-process_payment') as ToolPart;
    expect(answer).toMatchObject({ approval: { approved: false, reason: 'not today' } });
    h.close();
  });

  it.runIf(hasApprovals)('answerApproval: approve a server tool: the server runs it, the page adds nothing', async () => {
    const h = harness(wire);
    await h.chat.sendMessage({ text: 'Send 50 dollars to Hanako' });
    await h.idle();
    const asked = toolPart(lastAssistant(h), 'process_payment');
    // what useChat() returns works as well as the Chat: its two functions
    const added: unknown[] = [];
    const helpers = {
      addToolApprovalResponse: h.chat.addToolApprovalResponse,
      addToolOutput: (output: Parameters<typeof h.chat.addToolOutput>[0]) => {
        added.push(output);
        return h.chat.addToolOutput(output);
      },
    };
    expect(await answerApproval(helpers, asked, true, { tools: {} })).toBe(true);
    await h.idle();
    expect(h.errors).toEqual([]);
    const message = lastAssistant(h);
    expect(toolPart(message, 'process_payment')).toMatchObject({
      state: 'output-available',
      output: { status: 'success', recipient: 'Hanako' },
    });
    expect(textOf(message)).toContain('Sent 50 USD to Hanako.');
    const answer = h.sent[1].parts.find(p => p.type === 'tool-process_payment') as ToolPart;
    expect(answer).toMatchObject({ state: 'approval-responded', approval: { approved: true } });
    expect(added).toEqual([]);
    h.close();
  });

  it('message metadata (AdkMessageMetadata): usage and model from the finish chunk', async () => {
    const h = harness(wire);
    await h.chat.sendMessage({ text: 'hello there' });
    await h.idle();
    const { metadata } = lastAssistant(h);
    expectTypeOf(metadata?.usage?.totalTokens).toEqualTypeOf<number | undefined>();
    expect(metadata?.model).toBe('adk-asgi-demo');
    expect(metadata?.usage?.totalTokens).toBeGreaterThan(0);
    expect(metadata?.usage?.totalTokens).toBe(
      (metadata?.usage?.inputTokens ?? 0) + (metadata?.usage?.outputTokens ?? 0),
    );
    h.close();
  });
});

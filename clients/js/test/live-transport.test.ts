/**
 * AdkLiveTransport against a real `adk-asgi serve` (the offline demo agent), driven
 * by the AI SDK's own `AbstractChat` of ai@5, ai@6 and ai@7 (one Vitest project
 * each: `ai` is aliased per project, see vitest.config.ts).
 */
import * as ai from 'ai';
import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';

import { readFileSync } from 'node:fs';

import { AdkLiveTransport, type LiveInputError, type WebSocketConstructor } from '../src/live-transport';
import { lastAssistantMessageIsCompleteWithAnswers } from '../src/send-automatically';
import { MemoryState, sleep, textOf } from './helpers';

const serverUrl = inject('serverUrl');
const aiPackage = inject('aiPackage');
const hasApprovals = aiPackage !== 'ai5'; // ai 5 has no tool-approval chunks
let chatCounter = 0;

class TestChat extends ai.AbstractChat<UIMessage> {}

interface Harness {
  chat: TestChat;
  transport: AdkLiveTransport;
  state: MemoryState;
  errors: string[];
  /** What the server refused of the page's audio and image frames (`onInputError`). */
  inputErrors: LiveInputError[];
  data: Array<{ type: string; data: unknown }>;
  sent: unknown[];
  frames: string[];
  idle(): Promise<void>;
}

function harness(
  options: {
    modality?: 'text' | 'audio';
    auto?: boolean;
    onToolCall?: (h: Harness, call: { toolName: string; toolCallId: string; input: unknown }) => void;
  } = {},
): Harness {
  const sent: unknown[] = [];
  const frames: string[] = [];
  let lastActivity = Date.now();
  class RecordingWebSocket extends WebSocket {
    constructor(url: string) {
      super(url);
      this.on('message', (data, isBinary) => {
        lastActivity = Date.now();
        if (!isBinary) frames.push(String(data));
      });
    }
    override send(data: unknown): void {
      lastActivity = Date.now();
      sent.push(typeof data === 'string' ? JSON.parse(data) : { binary: (data as Uint8Array).byteLength });
      super.send(data as string);
    }
  }
  const state = new MemoryState();
  const errors: string[] = [];
  const inputErrors: LiveInputError[] = [];
  const data: Harness['data'] = [];
  const h = {} as Harness;
  const transport = new AdkLiveTransport({
    url: `${serverUrl}/api/chat`,
    modality: options.modality,
    webSocket: RecordingWebSocket as unknown as WebSocketConstructor,
    onServerTurn: () => void h.chat.resumeStream(),
    onInputError: error => inputErrors.push(error),
  });
  const chat = new TestChat({
    id: `vitest-${aiPackage}-${++chatCounter}-${Date.now()}`,
    state,
    transport,
    sendAutomaticallyWhen: options.auto === false ? undefined : lastAssistantMessageIsCompleteWithAnswers,
    onError: error => errors.push(error.message),
    onData: part => data.push({ type: part.type, data: part.data }),
    onToolCall: ({ toolCall }) => {
      options.onToolCall?.(h, toolCall as { toolName: string; toolCallId: string; input: unknown });
    },
  });
  Object.assign(h, {
    chat,
    transport,
    state,
    errors,
    inputErrors,
    data,
    sent,
    frames,
    async idle() {
      const deadline = Date.now() + 20_000;
      await sleep(20);
      for (;;) {
        if (Date.now() > deadline) throw new Error(`timeout; status ${chat.status}`);
        if ((chat.status === 'ready' || chat.status === 'error') && Date.now() - lastActivity > 250) return;
        await sleep(20);
      }
    },
  });
  return h;
}

/** A socket that answers the first frame it is sent with scripted frames: [delay ms, text]. */
const scripted: { frames: Array<[number, string]> } = { frames: [] };
class ScriptedSocket {
  readyState = 0;
  binaryType = 'blob';
  sent: string[] = [];
  onopen: ((e: unknown) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  constructor(readonly url: string) {
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
    }, 0);
  }
  send(data: string) {
    this.sent.push(data);
    if (this.sent.length > 1) return;
    let at = 0;
    for (const [delay, text] of scripted.frames) {
      at += delay;
      setTimeout(() => this.onmessage?.({ data: text }), at);
    }
  }
  close() {
    this.readyState = 3;
  }
}

async function readAll(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

function assistants(h: Harness): UIMessage[] {
  return h.state.messages.filter(m => m.role === 'assistant');
}

type ToolPart = {
  type: string;
  state: string;
  toolCallId: string;
  input: Record<string, unknown>;
  output?: Record<string, unknown>;
  approval?: { id: string; approved?: boolean };
};

function tools(message: UIMessage | undefined, name?: string): ToolPart[] {
  return ((message?.parts ?? []) as unknown as ToolPart[]).filter(
    p => p.type.startsWith('tool-') && (name == null || p.type === `tool-${name}`),
  );
}

function messageFrames(h: Harness): Array<{ data: { messages: UIMessage[] } }> {
  return h.sent.filter(f => (f as { type?: string }).type === 'message') as Array<{
    data: { messages: UIMessage[] };
  }>;
}

async function approve(h: Harness, approved: boolean, recipient?: string) {
  const part = tools(assistants(h).at(-1)).find(
    p => p.state === 'approval-requested' && (recipient == null || p.input.recipient === recipient),
  );
  expect(part, `a part awaiting approval${recipient ? ` for ${recipient}` : ''}`).toBeDefined();
  await (h.chat as unknown as {
    addToolApprovalResponse(a: { id: string; approved: boolean }): Promise<void>;
  }).addToolApprovalResponse({ id: part!.approval!.id, approved });
}

describe(`AdkLiveTransport with ${aiPackage}`, () => {
  it('streams a text turn, then another on the same socket', async () => {
    const h = harness();
    await h.chat.sendMessage({ text: 'hello there' });
    await h.idle();
    expect(h.errors).toEqual([]);
    const first = assistants(h)[0];
    expect(textOf(first)).toContain('You said: "hello there"');
    const deltas = h.frames.filter(f => f.includes('"text-delta"'));
    expect(deltas.length).toBeGreaterThan(5); // streamed token by token
    await h.chat.sendMessage({ text: "What's the weather in Tokyo?" });
    await h.idle();
    expect(assistants(h)).toHaveLength(2);
    const weather = assistants(h)[1];
    expect(tools(weather, 'get_weather')[0]).toMatchObject({
      state: 'output-available',
      input: { location: 'Tokyo' },
      output: { condition: 'sunny', temperature_c: 22 },
    });
    expect(textOf(weather)).toContain('The weather in Tokyo is sunny, 22°C.');
    // one socket, and only the newest message goes over it
    expect(messageFrames(h).map(f => f.data.messages.length)).toEqual([1, 1]);
    h.transport.close();
  });

  it('runs a browser tool without approval (change_bgm) and continues the message', async () => {
    const h = harness({
      onToolCall: (harness, call) => {
        if (call.toolName === 'change_bgm') {
          void harness.chat.addToolOutput({
            tool: 'change_bgm',
            toolCallId: call.toolCallId,
            output: { success: true, track: (call.input as { track: number }).track },
          } as never);
        }
      },
    });
    await h.chat.sendMessage({ text: 'Play track 2' });
    await h.idle();
    expect(h.errors).toEqual([]);
    expect(assistants(h)).toHaveLength(1);
    const message = assistants(h)[0];
    expect(tools(message, 'change_bgm')[0]).toMatchObject({ state: 'output-available', input: { track: 2 } });
    expect(textOf(message)).toContain('Now playing track 2.');
    expect(messageFrames(h)).toHaveLength(2); // the question, then the tool output
    h.transport.close();
  });

  it.runIf(hasApprovals).each([true, false])('approval of a payment (approved: %s)', async approved => {
    const h = harness();
    await h.chat.sendMessage({ text: 'Send 50 dollars to Hanako' });
    await h.idle();
    const asked = tools(assistants(h)[0], 'process_payment')[0];
    expect(asked.state).toBe('approval-requested');
    expect(h.chat.status).toBe('ready'); // the stream was handed back for the answer
    await approve(h, approved);
    await h.idle();
    expect(h.errors).toEqual([]);
    expect(assistants(h)).toHaveLength(1); // continued on the same message
    const message = assistants(h)[0];
    const payment = tools(message, 'process_payment')[0];
    if (approved) {
      expect(payment.state).toBe('output-available');
      expect(payment.output).toMatchObject({ status: 'success', amount: 50, recipient: 'Hanako' });
      expect(textOf(message)).toContain('Sent 50 USD to Hanako.');
    } else {
      expect(payment.state).toBe('output-denied');
      expect(textOf(message)).toContain('The payment to Hanako was cancelled.');
    }
    h.transport.close();
  });

  it.runIf(hasApprovals)('two payments, one approved and one denied, answered together', async () => {
    const h = harness();
    await h.chat.sendMessage({ text: 'Send 30 dollars to Alice and 40 dollars to Bob' });
    await h.idle();
    expect(tools(assistants(h)[0], 'process_payment').map(p => p.state)).toEqual([
      'approval-requested',
      'approval-requested',
    ]);
    await approve(h, true, 'Alice');
    expect(messageFrames(h)).toHaveLength(1); // nothing is sent until both are answered
    await approve(h, false, 'Bob');
    await h.idle();
    expect(h.errors).toEqual([]);
    const message = assistants(h)[0];
    const states = Object.fromEntries(
      tools(message, 'process_payment').map(p => [p.input.recipient, p.state]),
    );
    expect(states).toEqual({ Alice: 'output-available', Bob: 'output-denied' });
    expect(textOf(message)).toContain('Sent 30 USD to Alice.');
    expect(textOf(message)).toContain('The payment to Bob was cancelled.');
    expect(messageFrames(h)).toHaveLength(2);
    h.transport.close();
  });

  it.runIf(hasApprovals)('a browser tool with approval: approval and result in one answer', async () => {
    const h = harness();
    await h.chat.sendMessage({ text: 'Where am I?' });
    await h.idle();
    const asked = tools(assistants(h)[0], 'get_location')[0];
    expect(asked.state).toBe('approval-requested');
    await approve(h, true);
    await sleep(100);
    expect(messageFrames(h)).toHaveLength(1); // the approved tool still owes its result
    await h.chat.addToolOutput({
      tool: 'get_location',
      toolCallId: asked.toolCallId,
      output: { latitude: 35.6812, longitude: 139.7671, accuracy: 10 },
    } as never);
    await h.idle();
    expect(h.errors).toEqual([]);
    const message = assistants(h)[0];
    expect(tools(message, 'get_location')[0].state).toBe('output-available');
    expect(textOf(message)).toContain('You are at latitude 35.6812, longitude 139.7671.');
    expect(messageFrames(h)).toHaveLength(2);
    h.transport.close();
  });

  it.runIf(hasApprovals)('a browser tool approved first, its result sent later', async () => {
    const h = harness({ auto: false });
    await h.chat.sendMessage({ text: 'Where am I?' });
    await h.idle();
    const asked = tools(assistants(h)[0], 'get_location')[0];
    await approve(h, true);
    await h.chat.sendMessage(); // the approval alone
    await h.idle();
    expect(tools(assistants(h)[0], 'get_location')[0].state).toBe('approval-responded');
    await h.chat.addToolOutput({
      tool: 'get_location',
      toolCallId: asked.toolCallId,
      output: { latitude: 1.5, longitude: 2.5 },
    } as never);
    await h.chat.sendMessage();
    await h.idle();
    expect(h.errors).toEqual([]);
    expect(textOf(assistants(h)[0])).toContain('You are at latitude 1.5, longitude 2.5.');
    h.transport.close();
  });

  it('stop() interrupts the answer and the socket stays usable', async () => {
    const h = harness();
    const sending = h.chat.sendMessage({ text: 'tell a long story' });
    const deadline = Date.now() + 10_000;
    while (textOf(assistants(h)[0]).length < 20 && Date.now() < deadline) await sleep(5);
    await h.chat.stop();
    await sending;
    await h.idle();
    const story = textOf(assistants(h)[0]);
    expect(story.length).toBeGreaterThan(0);
    expect(story).not.toContain('everyone fell asleep'); // the story's end never came
    expect(h.sent.some(f => (f as { type?: string }).type === 'interrupt')).toBe(true);
    await h.chat.sendMessage({ text: 'hello again' });
    await h.idle();
    expect(textOf(assistants(h).at(-1))).toContain('You said: "hello again"');
    h.transport.close();
  });

  it('voice: microphone audio in, a turn the server starts, speech and transcript out', async () => {
    const h = harness({ modality: 'audio' });
    await h.transport.open(h.chat.id);
    h.transport.startAudio();
    const pcm = new Uint8Array(3200); // 100 ms of PCM16 at 16 kHz
    for (let i = 0; i < pcm.length; i += 2) pcm[i] = (i * 7) % 256;
    for (let i = 0; i < 5; i++) h.transport.sendAudio(pcm);
    h.transport.stopAudio();
    const deadline = Date.now() + 15_000;
    while (!textOf(assistants(h)[0]).includes('22°C') && Date.now() < deadline) await sleep(20);
    await h.idle();
    expect(h.errors).toEqual([]);
    const heard = h.data.filter(d => d.type === 'data-transcription');
    expect(heard[0]?.data).toEqual({ role: 'user', text: "What's the weather in Tokyo?", finished: true });
    const speech = h.data.filter(d => d.type === 'data-pcm');
    expect(speech.length).toBeGreaterThan(5);
    expect(speech[0].data).toMatchObject({ sampleRate: 24000, channels: 1, bitDepth: 16 });
    // transient chunks are not kept in the message, and each plays once
    const message = assistants(h)[0];
    expect(message.parts.some(p => p.type.startsWith('data-'))).toBe(false);
    expect(speech.length).toBe(h.frames.filter(f => f.includes('"data-pcm"')).length);
    // the spoken answer's transcript, once: one text part per step
    expect(message.parts.filter(p => p.type === 'text').map(p => (p as { text: string }).text)).toEqual([
      'Let me check the weather in Tokyo.',
      'The weather in Tokyo is sunny, 22°C.',
    ]);
    expect(assistants(h)).toHaveLength(1);
    expect(h.sent.filter(f => 'binary' in (f as object))).toHaveLength(5);
    h.transport.close();
  });

  it('camera frames: sendImage, and what the server refuses comes to onInputError, no turn ends', async () => {
    const jpeg = readFileSync(new URL('../../../tests/fixtures/images/frame.jpg', import.meta.url));
    const png = readFileSync(new URL('../../../tests/fixtures/images/frame.png', import.meta.url));
    const h = harness();
    await h.transport.open(h.chat.id);
    h.transport.sendImage({ mimeType: 'image/jpeg', data: new Uint8Array(jpeg) });
    h.transport.sendAudio(new Uint8Array(jpeg)); // a JPEG is not microphone audio
    const sending = h.chat.sendMessage({ text: 'tell a long story' });
    while (h.inputErrors.length < 1) await sleep(20);
    // while the story streams: a PNG that says it is a JPEG, and a burst over the rate
    h.transport.sendImage({ mimeType: 'image/jpeg', data: png.buffer.slice(png.byteOffset, png.byteOffset + png.length) });
    for (let i = 0; i < 5; i++) h.transport.sendImage({ mimeType: 'image/jpeg', data: jpeg.toString('base64') });
    await sending;
    await h.idle();
    const codes = h.inputErrors.map(e => e.code);
    expect(codes[0]).toBe('not_pcm_audio');
    expect(h.inputErrors[0].message).toContain('JPEG');
    expect(codes[1]).toBe('unsupported_image_type');
    // 2 frames a burst, 1 a second: of 5 sent at once, some are refused
    expect(codes.length).toBeGreaterThanOrEqual(3);
    expect(new Set(codes.slice(2))).toEqual(new Set(['image_rate_exceeded']));
    // the refusals ended nothing: the story came whole, and no chat error
    expect(h.errors).toEqual([]);
    expect(textOf(assistants(h)[0])).toContain('everyone fell asleep');
    const frames = h.sent.filter(f => (f as { type?: string }).type === 'image_frame');
    expect(frames).toHaveLength(7);
    expect(frames[0]).toEqual({
      type: 'image_frame',
      version: '1.0',
      data: { mimeType: 'image/jpeg', chunk: jpeg.toString('base64') },
    });
    h.transport.close();
  });

  it('rejects a chunk that fails the schema, like the official transports', async () => {
    scripted.frames = [
      [0, 'data: {"type":"start","messageId":"m1"}\n\n'],
      [0, 'data: {"type":"text-delta"}\n\n'],
    ];
    const transport = new AdkLiveTransport({
      url: 'ws://127.0.0.1:9/api/chat',
      webSocket: ScriptedSocket as unknown as WebSocketConstructor,
    });
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'c1',
      messageId: undefined,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      abortSignal: undefined,
    });
    const reader = stream.getReader();
    const seen: UIMessageChunk[] = [];
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          seen.push(value);
        }
      })(),
    ).rejects.toThrow();
    expect(seen.map(c => c.type)).toEqual(['start']);
  });

  it.runIf(hasApprovals)('an approval request that comes late is not lost: the turn is offered for resuming', async () => {
    const call = '"toolCallId":"c1","toolName":"get_location","input":{}';
    scripted.frames = [
      [0, 'data: {"type":"start","messageId":"m1"}\n\n'],
      [0, 'data: {"type":"start-step"}\n\n'],
      [0, `data: {"type":"tool-input-available",${call}}\n\n`],
      // later than the settle time: the stream was handed back already
      [300, `data: {"type":"tool-input-available",${call},"providerMetadata":{"adk":{"approvalId":"a1"}}}\n\n`],
      [0, 'data: {"type":"tool-approval-request","approvalId":"a1","toolCallId":"c1"}\n\n'],
    ];
    const offered: string[] = [];
    const transport = new AdkLiveTransport({
      url: 'ws://127.0.0.1:9/api/chat',
      webSocket: ScriptedSocket as unknown as WebSocketConstructor,
      clientToolSettleMs: 100,
      onServerTurn: ({ chatId }) => offered.push(chatId),
    });
    const first = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'c-late',
      messageId: undefined,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Where am I?' }] }],
      abortSignal: undefined,
    });
    expect((await readAll(first)).map(c => c.type)).toEqual(['start', 'start-step', 'tool-input-available']);
    const deadline = Date.now() + 2000;
    while (offered.length === 0 && Date.now() < deadline) await sleep(10);
    expect(offered).toEqual(['c-late']);
    const resumed = await transport.reconnectToStream({ chatId: 'c-late' });
    expect(resumed).not.toBeNull();
    const replay = await readAll(resumed!); // the approval request ends the request again
    expect(replay.map(c => c.type)).toEqual([
      'start', 'start-step', 'tool-input-available', 'tool-input-available', 'tool-approval-request',
    ]);
    expect(await transport.reconnectToStream({ chatId: 'c-late' })).toBeNull(); // nothing left
    transport.close();
  });

  it('regenerate asks the last question again (a live session cannot rewind)', async () => {
    const h = harness();
    await h.chat.sendMessage({ text: 'hello there' });
    await h.idle();
    const first = assistants(h)[0].id;
    await h.chat.regenerate();
    await h.idle();
    expect(h.errors).toEqual([]);
    expect(assistants(h)).toHaveLength(1);
    expect(assistants(h)[0].id).not.toBe(first);
    expect(textOf(assistants(h)[0])).toContain('You said: "hello there"');
    const asked = messageFrames(h).map(f => f.data.messages[0]);
    expect(asked).toHaveLength(2);
    expect(asked[1]).toEqual(asked[0]); // the same user message, sent again
    h.transport.close();
  });
});

/**
 * AdkLiveTransport: a `ChatTransport` for adk-asgi's live WebSocket, protocol A
 * (the seeds' envelope), for AI SDK 5, 6 and 7 apps.
 *
 * It imports nothing but `ai`. With ai@7 you may use the library's own
 * `WebSocketChatTransport` (protocol B) instead; this transport adds what
 * protocol B has no frames for: microphone audio (`sendAudio`, `startAudio`,
 * `stopAudio`), camera and screen frames (`sendImage`), `interrupt`, and turns
 * the server starts by itself (a spoken question).
 *
 * ```ts
 * const transport = new AdkLiveTransport({
 *   url: '/api/chat',                      // ws(s):// derived from http(s):// or a path
 *   modality: 'audio',                     // the model answers with speech (+ its transcript)
 *   onServerTurn: () => chat.resumeStream(),
 * });
 * const chat = new Chat({ transport, sendAutomaticallyWhen: ..., onData: playPcm });
 * ```
 *
 * The wire (one WebSocket per chat, `?chatId=` and `?modality=` on the URL):
 *
 * - client → server: `{"type":"message","version":"1.0","data":{"id",messages}}`
 *   (the last message only: a user message starts a turn, an assistant message
 *   carries approvals and browser-tool results), binary frames of PCM16 mono
 *   16 kHz microphone audio, `image_frame {mimeType, chunk}` (a camera or
 *   screen frame), `audio_control {action:"start"|"stop"}`, `interrupt`.
 * - server → client: every UI message chunk as a text frame `data: {json}\n\n`,
 *   `data: [DONE]\n\n` after each turn; JSON control frames: `error {code,
 *   message}` for a refused audio or image frame (`onInputError`), `pong`.
 *
 * How a turn maps to `sendMessages` streams: the server keeps one turn open
 * while it waits for an approval or a browser tool's result (nothing is
 * re-sent). `useChat` only sends approvals and tool outputs once the request's
 * stream has ended, so this transport ends the stream as soon as every tool
 * call of the current step is done or waits for the page (the HTTP endpoint
 * ends its response at the same point with `finishReason: "tool-calls"`). The
 * next `sendMessages` (from `sendAutomaticallyWhen`) sends the answers and
 * returns a stream that continues the same assistant message.
 *
 * Chunks that arrive while no request is open (a turn the server started, or a
 * turn that went on after its stream was handed back) are kept and announced
 * with `onServerTurn`; `reconnectToStream` (`chat.resumeStream()`) then replays
 * that turn from its `start` and follows it (`resumeStreamIsReplay`).
 *
 * Every chunk is validated with the `ai` package's own `uiMessageChunkSchema`,
 * as the library's transports do.
 */
import {
  asSchema,
  uiMessageChunkSchema,
  type ChatRequestOptions,
  type ChatTransport,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';

import { toBase64, type ImageMimeType } from './frames';
import { liveUrl } from './live-url';

/** The parts of the DOM `WebSocket` the transport uses (the `ws` package fits too). */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string | ArrayBufferLike | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

/**
 * A refused audio or image frame: the server's `error` control frame. It ends no turn.
 * Codes: `not_pcm_audio` (audio that is not raw 16-bit PCM), `unsupported_image_type`,
 * `image_too_large`, `image_rate_exceeded`, `invalid_frame`.
 */
export interface LiveInputError {
  code: string;
  message: string;
}

export interface AdkLiveTransportOptions {
  /**
   * The chat endpoint: `ws(s)://…`, `http(s)://…` or a path such as `/api/chat`
   * (resolved against the page, `http` becoming `ws`).
   */
  url: string;
  /** `audio`: the model answers with speech (`data-pcm` chunks) and its transcript. */
  modality?: 'text' | 'audio';
  /** A WebSocket implementation (default: the global one; in Node < 22 pass `ws`). */
  webSocket?: WebSocketConstructor;
  /**
   * Called when the server streams a turn no request is open for (a spoken
   * question, or a turn that went on after its stream was handed back to the
   * page). Call `chat.resumeStream()` to show it.
   */
  onServerTurn?: (info: { chatId: string }) => void;
  /** Connection state changes, for a status indicator. */
  onConnectionChange?: (state: 'connecting' | 'open' | 'closed') => void;
  /**
   * The server refused an audio or image frame (`sendAudio`, `sendImage`): too large,
   * too many per second, or not what it claims to be. The connection and the turn go on.
   * Default: `console.warn`.
   */
  onInputError?: (error: LiveInputError) => void;
  /**
   * For servers that do not announce when a turn waits for the page (adk-asgi
   * sends a `data-awaiting-client` chunk; older servers did not): how long (ms)
   * the server must stay quiet after a browser tool call before the stream is
   * handed back. Unset (the default): wait for the server's announcement.
   */
  clientToolSettleMs?: number;
  /** How long (ms) to wait for the socket to open. Default 10 000. */
  connectTimeoutMs?: number;
}

const OPEN = 1;
const AWAITING_CLIENT = 'data-awaiting-client';
const PROTOCOL_VERSION = '1.0';

/**
 * Where a tool call of the open step stands:
 * - `server`: runs on the server, or the server is handling the page's answer;
 * - `approval`: waits for the user's approval (`tool-approval-request` seen);
 * - `output`: waits for the browser's result;
 * - `settling`: a browser tool whose approval request may still be on its way;
 * - `done`: its output (or denial) arrived.
 */
type CallStage = 'server' | 'approval' | 'output' | 'settling' | 'done';

interface Entry {
  chunk: UIMessageChunk;
  delivered: boolean;
}

interface Turn {
  entries: Entry[];
  calls: Map<string, CallStage>;
  finished: boolean;
  /** The request that asked for it was aborted: the rest is dropped. */
  aborted: boolean;
}

interface ActiveStream {
  controller: ReadableStreamDefaultController<UIMessageChunk>;
  turn: Turn | null;
  closed: boolean;
}

type ChunkValidator = { validate?: (value: unknown) => unknown };

export class AdkLiveTransport<UI_MESSAGE extends UIMessage = UIMessage>
  implements ChatTransport<UI_MESSAGE>
{
  /** `reconnectToStream` replays the turn from its `start` chunk. */
  readonly resumeStreamIsReplay = true;

  private readonly options: AdkLiveTransportOptions;
  private readonly schema: ChunkValidator;
  private socket: WebSocketLike | null = null;
  private socketChatId: string | null = null;
  private opening: Promise<WebSocketLike> | null = null;
  private frames: Promise<void> = Promise.resolve();
  private turn: Turn | null = null;
  /** Finished turns whose chunks no request has seen yet. */
  private backlog: Turn[] = [];
  private active: ActiveStream | null = null;
  private settleTimer: ReturnType<typeof setTimeout> | null = null;
  /** The server says when a turn waits for the page (`data-awaiting-client`): no guessing. */
  private serverAnnouncesWaits = false;
  private announceTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(options: AdkLiveTransportOptions) {
    this.options = options;
    this.schema = asSchema(uiMessageChunkSchema) as ChunkValidator;
  }

  // -- ChatTransport ---------------------------------------------------------------

  async sendMessages(
    options: {
      trigger: 'submit-message' | 'regenerate-message';
      chatId: string;
      messageId: string | undefined;
      messages: UI_MESSAGE[];
      abortSignal: AbortSignal | undefined;
    } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const { chatId, messages, trigger, abortSignal } = options;
    abortSignal?.throwIfAborted();
    let last = messages[messages.length - 1];
    if (trigger === 'regenerate-message') {
      // Live sessions cannot rewind: the last question is asked again.
      last = [...messages].reverse().find(m => m.role === 'user') ?? last;
    }
    if (last == null) throw new Error('AdkLiveTransport: there is no message to send.');
    const socket = await this.connect(chatId, abortSignal);
    this.cancelAnnouncement();
    this.endActive();
    const continuing = last.role === 'assistant' ? this.openTurn() : null;
    const stream = this.openStream(continuing, () => {
      this.send({ type: 'interrupt', version: PROTOCOL_VERSION });
      const turn = this.turn;
      if (turn != null) turn.aborted = true;
    });
    if (abortSignal != null) {
      abortSignal.addEventListener('abort', () => this.abortActive(stream.active), { once: true });
    }
    // Answers go as the assistant message; a browser tool's result that travels
    // with its approval goes right after it as a `tool_result` frame (the server
    // takes the approval from the message and the result as the tool's answer).
    const results = continuing != null ? this.splitResults(continuing, last) : [];
    socket.send(
      JSON.stringify({
        type: 'message',
        version: PROTOCOL_VERSION,
        data: { id: chatId, messages: [results.length > 0 ? results[0].message : last] },
      }),
    );
    for (const { toolCallId, result } of results) {
      socket.send(JSON.stringify({ type: 'tool_result', version: PROTOCOL_VERSION, data: { toolCallId, result } }));
    }
    if (continuing != null) {
      this.answered(continuing, last);
      this.maybeHandBack(continuing);
    }
    return stream.readable;
  }

  async reconnectToStream(
    _options: { chatId: string } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    if (this.active != null) return null;
    const turn = this.backlog.shift() ?? (this.hasUndelivered(this.turn) ? this.turn : null);
    if (turn == null) return null;
    this.cancelAnnouncement();
    const { readable, active } = this.openStream(
      turn,
      () => {
        if (!turn.finished) {
          this.send({ type: 'interrupt', version: PROTOCOL_VERSION });
          turn.aborted = true;
        }
      },
      false, // the replay below sends everything
    );
    for (const entry of turn.entries) {
      // A replay from `start`: the message is rebuilt; transient chunks
      // (audio, transcriptions) are not part of it and play only once.
      if (!isTransient(entry.chunk) || !entry.delivered) this.enqueue(active, entry.chunk);
      entry.delivered = true;
    }
    if (turn.finished) this.closeStream(active);
    else this.maybeHandBack(turn); // it may be waiting for the page already
    if (this.backlog.length > 0) this.announce();
    return readable;
  }

  // -- live extras -------------------------------------------------------------------

  /** Microphone audio: PCM16 little-endian mono 16 kHz, sent as a binary frame. */
  sendAudio(pcm: ArrayBuffer | Uint8Array): void {
    this.send(pcm instanceof Uint8Array ? pcm : new Uint8Array(pcm));
  }

  /**
   * A camera or screen frame for the model (e.g. from `FrameCapture`): a JPEG or PNG,
   * base64 or bytes. The server takes 1 per second and up to 7 MB each by default
   * (`Limits.images_per_second`, `max_image_bytes`); what it refuses comes back through
   * `onInputError`.
   */
  sendImage(frame: { mimeType: ImageMimeType; data: string | Uint8Array | ArrayBuffer }): void {
    const data = frame.data;
    const chunk = typeof data === 'string' ? data : toBase64(data instanceof Uint8Array ? data : new Uint8Array(data));
    this.send({ type: 'image_frame', version: PROTOCOL_VERSION, data: { mimeType: frame.mimeType, chunk } });
  }

  /** The user starts speaking (barges in on the model's answer). */
  startAudio(): void {
    this.send({ type: 'audio_control', version: PROTOCOL_VERSION, action: 'start' });
  }

  /** The user stopped speaking: the model answers what it heard. */
  stopAudio(): void {
    this.send({ type: 'audio_control', version: PROTOCOL_VERSION, action: 'stop' });
  }

  /** Stop the model's current answer (the turn ends with an interrupted `finish`). */
  interrupt(): void {
    this.send({ type: 'interrupt', version: PROTOCOL_VERSION });
  }

  /** Open the socket for `chatId` now (audio can be sent before any message). */
  async open(chatId: string): Promise<void> {
    await this.connect(chatId, undefined);
  }

  get connected(): boolean {
    return this.socket?.readyState === OPEN;
  }

  close(): void {
    const socket = this.socket;
    this.socket = null;
    this.socketChatId = null;
    this.opening = null;
    socket?.close(1000);
    this.connectionLost('The live connection was closed.');
  }

  // -- the socket -----------------------------------------------------------------------

  private send(frame: object | Uint8Array): void {
    const socket = this.socket;
    if (socket == null || socket.readyState !== OPEN) {
      throw new Error('AdkLiveTransport: the live connection is not open.');
    }
    socket.send(frame instanceof Uint8Array ? frame : JSON.stringify(frame));
  }

  private async connect(chatId: string, abortSignal: AbortSignal | undefined): Promise<WebSocketLike> {
    if (this.socketChatId !== chatId && (this.socket != null || this.opening != null)) {
      this.close(); // another chat: another live session
    }
    if (this.socket != null && this.socket.readyState === OPEN) return this.socket;
    if (this.opening == null) {
      this.opening = this.openSocket(chatId).finally(() => {
        this.opening = null;
      });
    }
    const socket = await this.opening;
    abortSignal?.throwIfAborted();
    return socket;
  }

  private openSocket(chatId: string): Promise<WebSocketLike> {
    const Impl =
      this.options.webSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (Impl == null) throw new Error('AdkLiveTransport: no WebSocket implementation.');
    this.options.onConnectionChange?.('connecting');
    const socket = new Impl(liveUrl(this.options.url, { chatId, modality: this.options.modality }));
    socket.binaryType = 'arraybuffer';
    this.socketChatId = chatId;
    return new Promise<WebSocketLike>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.close();
        reject(new Error('AdkLiveTransport: timed out connecting to the live endpoint.'));
      }, this.options.connectTimeoutMs ?? 10_000);
      socket.onopen = () => {
        clearTimeout(timer);
        this.socket = socket;
        this.options.onConnectionChange?.('open');
        resolve(socket);
      };
      socket.onerror = () => {
        clearTimeout(timer);
        reject(new Error('AdkLiveTransport: could not connect to the live endpoint.'));
      };
      socket.onclose = event => {
        clearTimeout(timer);
        reject(new Error(`AdkLiveTransport: the connection closed (${event.code}).`));
        if (this.socket === socket) {
          this.socket = null;
          this.socketChatId = null;
          this.connectionLost(`The live connection closed (code ${event.code}).`);
        }
        this.options.onConnectionChange?.('closed');
      };
      socket.onmessage = event => {
        if (typeof event.data !== 'string') return; // the server sends text frames only
        const text = event.data;
        // Validation may be asynchronous: frames are handled strictly in order.
        this.frames = this.frames.then(() => this.frame(text)).catch(error => this.failActive(error));
      };
    });
  }

  private connectionLost(reason: string): void {
    this.clearSettle();
    const active = this.active;
    this.active = null;
    if (active != null && !active.closed) {
      active.closed = true;
      active.controller.error(new Error(reason));
    }
    this.turn = null;
    this.backlog = [];
  }

  // -- frames -> chunks ---------------------------------------------------------------------

  private async frame(text: string): Promise<void> {
    if (!text.startsWith('data:')) {
      this.control(text); // a JSON control frame (pong, a refused input frame)
      return;
    }
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter(line => line.startsWith('data:'))
        .map(line => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data === '') continue;
      if (data === '[DONE]') {
        this.done();
        continue;
      }
      const chunk = await this.validate(JSON.parse(data));
      this.chunk(chunk);
    }
  }

  private control(text: string): void {
    let frame: { type?: unknown; code?: unknown; message?: unknown };
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame?.type !== 'error') return;
    const error = { code: String(frame.code ?? 'error'), message: String(frame.message ?? '') };
    if (this.options.onInputError != null) this.options.onInputError(error);
    else console.warn(`AdkLiveTransport: ${error.code}: ${error.message}`);
  }

  private async validate(value: unknown): Promise<UIMessageChunk> {
    const result = (await this.schema.validate?.(value)) as
      | { success: true; value: UIMessageChunk }
      | { success: false; error: Error }
      | undefined;
    if (result == null) return value as UIMessageChunk;
    if (!result.success) throw result.error;
    return result.value;
  }

  private chunk(chunk: UIMessageChunk): void {
    if (chunk.type === AWAITING_CLIENT) {
      // The server's own word that the turn now waits for the page: hand the stream back.
      this.serverAnnouncesWaits = true;
      const turn = this.turn;
      if (turn == null) return;
      const ids = ((chunk as { data?: { ids?: unknown } }).data?.ids ?? []) as unknown[];
      for (const id of ids) {
        if (typeof id === 'string' && turn.calls.get(id) === 'settling') turn.calls.set(id, 'output');
      }
      this.maybeHandBack(turn);
      return;
    }
    if (chunk.type === 'start') {
      this.finishTurn();
      this.turn = { entries: [], calls: new Map(), finished: false, aborted: false };
      if (this.active != null && this.active.turn == null) this.active.turn = this.turn;
    }
    const turn = this.turn;
    if (turn == null) {
      // Outside any turn: a protocol error (an answer the server refused).
      if (this.active != null) {
        this.enqueue(this.active, chunk);
        if (chunk.type === 'error') this.endActive();
      } else if (chunk.type === 'error') {
        console.error(`AdkLiveTransport: ${chunk.errorText}`);
      }
      return;
    }
    if (turn.aborted) return;
    const active = this.active != null && this.active.turn === turn ? this.active : null;
    turn.entries.push({ chunk, delivered: active != null });
    if (active != null) this.enqueue(active, chunk);
    else this.announce();
    this.track(turn, chunk);
    this.maybeHandBack(turn);
  }

  private done(): void {
    const turn = this.turn;
    if (turn == null) return;
    turn.finished = true;
    this.turn = null;
    this.clearSettle();
    if (this.active != null && this.active.turn === turn) this.endActive();
    else if (!turn.aborted && this.hasUndelivered(turn)) this.backlog.push(turn);
  }

  private finishTurn(): void {
    // A `start` without the previous turn's [DONE]: treat that turn as over.
    if (this.turn != null) this.done();
  }

  // -- when does the page have to answer? ----------------------------------------------------

  private track(turn: Turn, chunk: UIMessageChunk): void {
    switch (chunk.type) {
      case 'start-step':
        for (const [id, stage] of turn.calls) if (stage === 'done') turn.calls.delete(id);
        break;
      case 'tool-input-available': {
        const adk = (chunk.providerMetadata as { adk?: { approvalId?: unknown } } | undefined)?.adk;
        const previous = turn.calls.get(chunk.toolCallId);
        if (previous === 'approval' || previous === 'done') break;
        if (chunk.providerExecuted === true || typeof adk?.approvalId === 'string') {
          turn.calls.set(chunk.toolCallId, 'server'); // its approval request comes next
        } else {
          turn.calls.set(chunk.toolCallId, 'settling');
        }
        break;
      }
      case 'tool-approval-request':
        turn.calls.set(chunk.toolCallId, 'approval');
        break;
      case 'tool-output-available':
      case 'tool-output-error':
      case 'tool-output-denied':
        turn.calls.set(chunk.toolCallId, 'done');
        break;
    }
  }

  /**
   * Browser tools the user approved *and* the page ran, in one answer: the message
   * carries their approval (`approval-responded`), their results are returned
   * separately (`tool_result`).
   */
  private splitResults(
    turn: Turn,
    message: UIMessage,
  ): Array<{ message: UIMessage; toolCallId: string; result: unknown }> {
    const results: Array<{ toolCallId: string; result: unknown }> = [];
    const parts = message.parts.map(part => {
      const p = part as {
        type: string;
        toolCallId?: string;
        state?: string;
        providerExecuted?: boolean;
        approval?: { id: string; approved?: boolean; reason?: string };
        output?: unknown;
        errorText?: string;
      };
      if (
        p.toolCallId == null ||
        turn.calls.get(p.toolCallId) !== 'approval' ||
        p.approval?.approved !== true ||
        p.providerExecuted === true ||
        (p.state !== 'output-available' && p.state !== 'output-error')
      ) {
        return part;
      }
      results.push({
        toolCallId: p.toolCallId,
        result: p.state === 'output-error' ? { error: p.errorText ?? 'The tool failed.' } : p.output,
      });
      const { output: _output, errorText: _errorText, ...rest } = p;
      return { ...rest, state: 'approval-responded' } as unknown as typeof part;
    });
    const rewritten = { ...message, parts };
    return results.map(r => ({ ...r, message: rewritten }));
  }

  /** The page answered: what it sent is now the server's to handle. */
  private answered(turn: Turn, message: UIMessage): void {
    for (const part of message.parts) {
      const p = part as {
        type: string;
        toolCallId?: string;
        state?: string;
        providerExecuted?: boolean;
        approval?: { approved?: boolean };
        output?: unknown;
      };
      if (p.toolCallId == null || !(p.type.startsWith('tool-') || p.type === 'dynamic-tool')) continue;
      const stage = turn.calls.get(p.toolCallId);
      if (stage == null || stage === 'done') continue;
      if (p.state === 'approval-responded') {
        // An approved browser tool still owes its result.
        const owesOutput = p.approval?.approved === true && p.providerExecuted !== true;
        turn.calls.set(p.toolCallId, owesOutput ? 'output' : 'server');
      } else if (p.state === 'output-available' || p.state === 'output-error' || p.state === 'output-denied') {
        turn.calls.set(p.toolCallId, 'server');
      }
    }
  }

  /**
   * End the request's stream once every call of the step is done or waits for
   * the page (an approval, or a browser tool's result) and at least one waits.
   */
  private maybeHandBack(turn: Turn): void {
    this.clearSettle();
    const active = this.active;
    if (active == null || active.turn !== turn) return;
    let waiting = 0;
    let settling = false;
    for (const stage of turn.calls.values()) {
      if (stage === 'done') continue;
      if (stage === 'server') return;
      waiting++;
      if (stage === 'settling') settling = true;
    }
    if (waiting === 0) return;
    if (!settling) {
      this.endActive();
      return;
    }
    // The server announces its waits; only a server that does not is judged by silence.
    const settleMs = this.options.clientToolSettleMs;
    if (this.serverAnnouncesWaits || settleMs == null) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      if (this.active === active && this.turn === turn) this.endActive();
    }, settleMs);
  }

  private clearSettle(): void {
    if (this.settleTimer != null) clearTimeout(this.settleTimer);
    this.settleTimer = null;
  }

  // -- streams ---------------------------------------------------------------------------------

  private openTurn(): Turn | null {
    return this.turn != null && !this.turn.finished ? this.turn : null;
  }

  private openStream(
    turn: Turn | null,
    onCancel: () => void,
    flush = true,
  ): { readable: ReadableStream<UIMessageChunk>; active: ActiveStream } {
    let active!: ActiveStream;
    const readable = new ReadableStream<UIMessageChunk>({
      start: controller => {
        active = { controller, turn, closed: false };
      },
      cancel: () => {
        if (!active.closed) {
          active.closed = true;
          if (this.active === active) this.active = null;
          try {
            onCancel();
          } catch {
            // the socket is gone already
          }
        }
      },
    });
    this.active = active;
    if (turn != null && flush) {
      // What arrived since the stream was handed back belongs to this request.
      for (const entry of turn.entries) {
        if (!entry.delivered) this.enqueue(active, entry.chunk);
        entry.delivered = true;
      }
    }
    return { readable, active };
  }

  private abortActive(active: ActiveStream): void {
    if (active.closed) return;
    const turn = active.turn ?? this.turn;
    if (turn != null && !turn.finished) {
      turn.aborted = true;
      try {
        this.send({ type: 'interrupt', version: PROTOCOL_VERSION });
      } catch {
        // the socket is gone already
      }
    }
    this.closeStream(active);
  }

  private enqueue(active: ActiveStream, chunk: UIMessageChunk): void {
    if (!active.closed) active.controller.enqueue(chunk);
  }

  private closeStream(active: ActiveStream): void {
    if (this.active === active) this.active = null;
    if (active.closed) return;
    active.closed = true;
    active.controller.close();
    if (this.backlog.length > 0 || this.hasUndelivered(this.turn)) this.announce();
  }

  private endActive(): void {
    this.clearSettle();
    if (this.active != null) this.closeStream(this.active);
  }

  private failActive(error: unknown): void {
    const active = this.active;
    this.active = null;
    if (active != null && !active.closed) {
      active.closed = true;
      active.controller.error(error);
    } else {
      console.error('AdkLiveTransport:', error);
    }
  }

  private hasUndelivered(turn: Turn | null): boolean {
    return turn != null && !turn.aborted && turn.entries.some(entry => !entry.delivered);
  }

  private announce(): void {
    if (this.announceTimer != null || this.options.onServerTurn == null) return;
    // A moment's grace: the page may be about to send its answers anyway.
    this.announceTimer = setTimeout(() => {
      this.announceTimer = null;
      if (this.active == null && this.socketChatId != null) {
        this.options.onServerTurn?.({ chatId: this.socketChatId });
      }
    }, 30);
  }

  private cancelAnnouncement(): void {
    if (this.announceTimer != null) clearTimeout(this.announceTimer);
    this.announceTimer = null;
  }
}

function isTransient(chunk: UIMessageChunk): boolean {
  return chunk.type.startsWith('data-') && (chunk as { transient?: boolean }).transient === true;
}

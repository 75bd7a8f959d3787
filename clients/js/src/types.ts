/**
 * The types of what an adk-asgi server sends besides the AI SDK's standard parts: its
 * `data-*` parts, its message metadata and the `adk` provider metadata of a tool call,
 * so that `useChat<AdkUIMessage>()` and `onData` are typed.
 */
import type { UIMessage, UITools } from 'ai';

/** `data-pcm` (live mode with `modality: 'audio'`): a chunk of the model's speech. Transient. */
export type PcmData = {
  /** Base64 of PCM16 little-endian samples. */
  content: string;
  /** Samples per second: 24 000 for Gemini's live models. */
  sampleRate: number;
  channels: number;
  bitDepth?: number;
};

/** `data-transcription` (live mode): what the user said, as the model heard it. Transient. */
export type TranscriptionData = {
  role: 'user';
  text: string;
  /** The last piece of this utterance. */
  finished: boolean;
};

/**
 * `data-queued` (SSE): the first chunk of a request whose chat is answering another one
 * (a second tab): the turn waits for it, then streams on the same response. Transient.
 */
export type QueuedData = {
  reason: 'chat-busy';
};

/**
 * The data parts by name (`data-pcm` is `pcm`), the second type parameter of
 * `UIMessage`. Add your own: `AdkDataTypes & { weather: Weather }`.
 */
export type AdkDataTypes = {
  pcm: PcmData;
  transcription: TranscriptionData;
  queued: QueuedData;
};

/** Token counts of the turn, summed over its model calls (only the counts the model gave). */
export type AdkUsage = {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
};

/** `message.metadata`: set by the `finish` chunk when the model reported any. */
export type AdkMessageMetadata = {
  usage?: AdkUsage;
  /** The model version that answered. */
  model?: string;
};

/**
 * A tool part's `callProviderMetadata.adk` when the tool asks for confirmation
 * (ADK's `require_confirmation` / `request_confirmation`).
 */
export type AdkToolCallMetadata = {
  approvalId: string;
  /** The hint the tool gave for its confirmation question. */
  hint?: string;
  /** The structured payload the tool asked to be confirmed. */
  payload?: unknown;
};

/** A `UIMessage` as an adk-asgi server streams it; `TOOLS` types your tool parts. */
export type AdkUIMessage<TOOLS extends UITools = UITools> = UIMessage<
  AdkMessageMetadata,
  AdkDataTypes,
  TOOLS
>;

/** `callProviderMetadata.adk` of a message part, when the server set it (tool parts). */
export function adkToolCallMetadata(part: object): AdkToolCallMetadata | undefined {
  const metadata = (part as { callProviderMetadata?: { adk?: Partial<AdkToolCallMetadata> } }).callProviderMetadata;
  const adk = metadata?.adk;
  return typeof adk?.approvalId === 'string' ? (adk as AdkToolCallMetadata) : undefined;
}

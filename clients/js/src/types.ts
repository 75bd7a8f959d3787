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

/** A text segment of the answer and the sources it is grounded on (`grounding_supports`). */
export type GroundingSupport = {
  /** The segment's text, as the model wrote it. */
  text: string;
  /** Byte offsets of the segment in its part of the model's response. */
  startIndex: number;
  endIndex: number;
  /** The part of the model's response the offsets count in, when not the first. */
  partIndex?: number;
  /** The `sourceId`s of the message's `source-url` / `source-document` parts it cites. */
  sourceIds: string[];
  /** The model's confidence in each source, in the order of `sourceIds`. */
  confidence?: number[];
};

/** A passage the model recited (`citation_metadata`), with its source part. */
export type GroundingCitation = {
  sourceId: string;
  startIndex?: number;
  endIndex?: number;
  license?: string;
};

/**
 * `data-grounding`: what one model response says it is grounded on, besides its source
 * parts. Kept in the message (and in its history).
 */
export type GroundingData = {
  /** The Google Search queries the model ran (`web_search_queries`). */
  searchQueries?: string[];
  /** The queries it ran against a retrieval store (Vertex AI Search, RAG). */
  retrievalQueries?: string[];
  /**
   * The Google Search suggestions as Google renders them (HTML and CSS,
   * `search_entry_point.rendered_content`). Google's terms for Grounding with Google
   * Search require showing them, unmodified, with the answer: render them isolated (the
   * chat page uses a sandboxed `<iframe srcdoc>`, links opening a new tab).
   */
  searchEntryPoint?: string;
  supports?: GroundingSupport[];
  citations?: GroundingCitation[];
};

/** `providerMetadata.adk` of a `source-url` or `source-document` part (none for web results). */
export type AdkSourceMetadata = {
  kind: 'maps' | 'image' | 'retrievedContext' | 'citation';
  /** Google Maps: the place's id. */
  placeId?: string;
  /** Image search: the image itself (the source's `url` is the page it is on). */
  imageUrl?: string;
  /** Vertex AI Search / RAG: the retrieved passage. */
  text?: string;
  pageNumber?: number;
};

/** `providerMetadata.adk` of a `file` part: the file's name, when ADK's part had one (ai 6, 7). */
export type AdkFileMetadata = {
  filename?: string;
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
  grounding: GroundingData;
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

/**
 * A `UIMessage` as an adk-asgi server streams it; `TOOLS` types your tool parts and `DATA`
 * adds your data parts to the server's own. `adk-asgi types` writes both for an agent
 * (`useChat<MyAgentMessage>()`).
 */
export type AdkUIMessage<
  TOOLS extends UITools = UITools,
  DATA extends Record<string, unknown> = Record<never, never>,
> = UIMessage<AdkMessageMetadata, AdkDataTypes & DATA, TOOLS>;

/** `callProviderMetadata.adk` of a message part, when the server set it (tool parts). */
export function adkToolCallMetadata(part: object): AdkToolCallMetadata | undefined {
  const metadata = (part as { callProviderMetadata?: { adk?: Partial<AdkToolCallMetadata> } }).callProviderMetadata;
  const adk = metadata?.adk;
  return typeof adk?.approvalId === 'string' ? (adk as AdkToolCallMetadata) : undefined;
}

/**
 * liveUrl: the WebSocket URL of an adk-asgi chat endpoint, from the URL or path its
 * HTTP side is mounted at.
 */

export interface LiveUrlOptions {
  /** Binds the connection to one chat (`?chatId=`); protocol A needs it, protocol B may. */
  chatId?: string;
  /** `audio`: the model answers with speech (`data-pcm` chunks) and its transcript. */
  modality?: 'text' | 'audio';
  /** What a path is resolved against (default: the page's `location.href`). */
  base?: string | URL;
}

/**
 * `ws(s)://…` for `http(s)://…`, a path resolved against the page, or a `ws(s)://`
 * URL as it is; `chatId` and `modality` become query parameters.
 *
 * ```ts
 * liveUrl('/api/chat', { chatId: 'chat-1', modality: 'audio' })
 * // on https://example.com/ → 'wss://example.com/api/chat?chatId=chat-1&modality=audio'
 * ```
 */
export function liveUrl(api: string, options: LiveUrlOptions = {}): string {
  const base = options.base ?? (typeof location === 'undefined' ? undefined : location.href);
  let url: URL;
  try {
    url = new URL(api, base);
  } catch {
    throw new Error(`adk-asgi: cannot make a WebSocket URL of ${JSON.stringify(api)} (outside a browser, give an absolute URL or options.base).`);
  }
  if (url.protocol === 'http:') url.protocol = 'ws:';
  else if (url.protocol === 'https:') url.protocol = 'wss:';
  else if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new Error(`adk-asgi: ${url.protocol} is not an HTTP or WebSocket URL.`);
  }
  if (options.chatId != null) url.searchParams.set('chatId', options.chatId);
  if (options.modality != null) url.searchParams.set('modality', options.modality);
  return url.toString();
}

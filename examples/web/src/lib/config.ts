/**
 * Where the chat endpoint is. Same origin `/api/chat` by default (what `adk-asgi serve`
 * serves), else `?api=…` in the page URL, else VITE_ADK_API at build time.
 */
export function chatApi(): string {
  const fromQuery = new URLSearchParams(location.search).get('api');
  return fromQuery || import.meta.env.VITE_ADK_API || '/api/chat';
}

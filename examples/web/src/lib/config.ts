/**
 * What the page knows about its server: where the chat endpoint is and what to show about
 * the agent. `adk-asgi serve` says both in `agent.json`, beside the page, so the page works
 * at `/` and under any prefix (`/chat-app/` finds `/chat-app/api/chat`).
 *
 * The endpoint: `?api=…` in the page URL, else VITE_ADK_API at build time, else the
 * server's `api` (relative to the page; default `api/chat`).
 */
export interface PageInfo {
  title: string;
  description: string;
  suggestions: string[];
  api: string;
}

let info: PageInfo = { title: 'Talk to your agent', description: '', suggestions: [], api: 'api/chat' };

/** Read `agent.json` once, before the page renders (a page without it keeps the defaults). */
export async function loadPageInfo(): Promise<PageInfo> {
  try {
    const response = await fetch(new URL('agent.json', location.href), {
      headers: { accept: 'application/json' },
    });
    if (response.ok) info = { ...info, ...((await response.json()) as Partial<PageInfo>) };
  } catch {
    // no server info: the defaults
  }
  document.title = info.title;
  return info;
}

export function pageInfo(): PageInfo {
  return info;
}

export function chatApi(): string {
  const fromQuery = new URLSearchParams(location.search).get('api');
  return fromQuery || import.meta.env.VITE_ADK_API || new URL(info.api, location.href).pathname;
}

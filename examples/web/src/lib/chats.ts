/**
 * The user's chats on the server (adk-asgi's chat routes): the list, one chat's history,
 * delete, and whether a turn of a chat is still streaming.
 */
import type { AssistantMessage } from '../agent.gen';

export interface ChatSummary {
  id: string;
  title: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ChatPage {
  chats: ChatSummary[];
  next: string | null;
}

const chatUrl = (api: string, id: string) => `${api}/${encodeURIComponent(id)}`;

/** GET {api}: a page of the user's chats, newest first. */
export async function listChats(api: string, cursor?: string | null): Promise<ChatPage> {
  const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : '';
  const response = await fetch(`${api}${query}`, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`listing chats: HTTP ${response.status}`);
  return (await response.json()) as ChatPage;
}

/** GET {api}/{id}: the chat's messages, as the page showed them; null if there is none. */
export async function loadChat(api: string, id: string): Promise<AssistantMessage[] | null> {
  const response = await fetch(chatUrl(api, id), { headers: { accept: 'application/json' } });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`loading chat: HTTP ${response.status}`);
  const body = (await response.json()) as { messages: AssistantMessage[] };
  return body.messages;
}

/** DELETE {api}/{id}: the chat, its running turn, its files. */
export async function deleteChat(api: string, id: string): Promise<void> {
  const response = await fetch(chatUrl(api, id), { method: 'DELETE' });
  if (!response.ok && response.status !== 404) throw new Error(`deleting chat: HTTP ${response.status}`);
}

/** GET {api}/{id}/evalset: the chat as an ADK eval set (a download, for `adk eval`). */
export function evalSetUrl(api: string, id: string): string {
  return `${chatUrl(api, id)}/evalset`;
}

/** HEAD {api}/{id}/stream: a turn of the chat streams (or ended while nobody read it). */
export async function streamActive(api: string, id: string): Promise<boolean> {
  const response = await fetch(`${chatUrl(api, id)}/stream`, { method: 'HEAD' });
  return response.status === 200;
}

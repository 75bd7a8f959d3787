/**
 * One chat per transport mode: the `Chat` (from @ai-sdk/react), its transport, and
 * the page's handlers for browser tools and live audio.
 */
import { Chat } from '@ai-sdk/react';
import {
  AdkLiveTransport,
  lastAssistantMessageIsCompleteWithAnswers,
  liveUrl,
  runBrowserTool,
  type BrowserTools,
  type LiveInputError,
  type PcmPlayer,
} from 'adk-asgi';
import { DefaultChatTransport, WebSocketChatTransport, type ChatTransport } from 'ai';

import type { AssistantMessage } from './agent.gen';
import type { BgmPlayer } from './lib/bgm';
import { getLocation } from './lib/browser-tools';
import { chatApi } from './lib/config';

export type Mode = 'sse' | 'websocket' | 'voice';

export const MODES: Record<Mode, { label: string; transport: string; wire: (api: string) => string }> = {
  sse: {
    label: 'SSE',
    transport: 'DefaultChatTransport',
    wire: api => `POST ${api} → text/event-stream`,
  },
  websocket: {
    label: 'WebSocket',
    transport: 'WebSocketChatTransport (ai@7)',
    wire: api => `${liveUrl(api)} · one socket, many requests`,
  },
  voice: {
    label: 'Voice',
    transport: 'AdkLiveTransport (protocol A)',
    wire: api => `${liveUrl(api, { modality: 'audio' })} · mic and camera in, speech out`,
  },
};

export interface Session {
  mode: Mode;
  chat: Chat<AssistantMessage>;
  live: AdkLiveTransport<AssistantMessage> | null;
  /** The tools that run in this browser (after approval for get_location). */
  tools: BrowserTools;
  /** What the user said, by the id of the assistant message that answered it. */
  heard: Map<string, string>;
  dispose(): void;
}

interface Handlers {
  bgm: BgmPlayer;
  speaker: PcmPlayer;
  onHeard: () => void;
  onConnection: (state: 'connecting' | 'open' | 'closed') => void;
  /** The server refused an audio or image frame (the turn goes on). */
  onInputError: (error: LiveInputError) => void;
}

let chatCount = 0;

/** A new chat's id. */
export function newChatId(mode: Mode): string {
  return `${mode}-${Date.now().toString(36)}-${++chatCount}`;
}

/** The chat to open: its id, and its messages (a history loaded from the server). */
export interface ChatStart {
  id: string;
  messages: AssistantMessage[];
}

// Only the new (or continued) message goes to the server, which keeps the chat in its
// session: an answer (an API key) is not sent again with every later turn.
function lastMessageOnly({ id, messages, trigger, messageId, body }: {
  id: string;
  messages: AssistantMessage[];
  trigger: string;
  messageId: string | undefined;
  body: object | undefined;
}) {
  return { body: { ...body, id, message: messages[messages.length - 1], trigger, messageId } };
}

export function createSession(mode: Mode, handlers: Handlers, start: ChatStart): Session {
  const api = chatApi();
  const { id, messages } = start;
  const heard = new Map<string, string>();
  let live: AdkLiveTransport<AssistantMessage> | null = null;
  let transport: ChatTransport<AssistantMessage>;
  let chat: Chat<AssistantMessage>;
  const tools: BrowserTools = {
    get_location: () => getLocation(),
    change_bgm: async (input: { track?: unknown }) => {
      const track = Number(input.track);
      const state = await handlers.bgm.play(track);
      return { success: true, track, playing: state.playing };
    },
  };
  if (mode === 'sse') {
    transport = new DefaultChatTransport({ api, prepareSendMessagesRequest: lastMessageOnly });
  } else if (mode === 'websocket') {
    transport = new WebSocketChatTransport({ url: api }); // ai@7 makes it ws(s)://
  } else {
    live = new AdkLiveTransport<AssistantMessage>({
      url: api,
      modality: 'audio',
      onServerTurn: () => void chat.resumeStream(),
      onConnectionChange: handlers.onConnection,
      onInputError: handlers.onInputError,
    });
    transport = live;
  }
  chat = new Chat<AssistantMessage>({
    id,
    messages,
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithAnswers,
    onToolCall: ({ toolCall }) => {
      // Browser tools without approval run as soon as they are called. Tools that
      // need approval (get_location) run from the Approve button instead.
      if (toolCall.toolName === 'change_bgm') void runBrowserTool(chat, toolCall, tools);
    },
    onData: part => {
      if (part.type === 'data-pcm') {
        handlers.speaker.play(part.data);
      } else if (part.type === 'data-transcription') {
        const answering = chat.lastMessage;
        if (part.data.role === 'user' && part.data.text && answering?.role === 'assistant') {
          heard.set(answering.id, part.data.text);
          handlers.onHeard();
        }
      }
    },
  });
  return {
    mode,
    chat,
    live,
    tools,
    heard,
    dispose() {
      void chat.stop();
      transport.close?.();
      live?.close();
    },
  };
}

/**
 * One chat per transport mode: the `Chat` (from @ai-sdk/react), its transport, and
 * the page's handlers for browser tools and live audio.
 */
import { Chat } from '@ai-sdk/react';
import { DefaultChatTransport, WebSocketChatTransport, type ChatTransport, type UIMessage } from 'ai';

import { AdkLiveTransport } from './adk-live-transport';
import type { PcmChunk, PcmPlayer } from './lib/audio';
import type { BgmPlayer } from './lib/bgm';
import { getLocation } from './lib/browser-tools';
import { chatApi, chatSocketUrl } from './lib/config';
import { lastAssistantMessageIsCompleteWithAnswers } from './lib/send-automatically';

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
    wire: api => `${chatSocketUrl(api)} · one socket, many requests`,
  },
  voice: {
    label: 'Voice',
    transport: 'AdkLiveTransport (protocol A)',
    wire: api => `${chatSocketUrl(api)}?modality=audio · mic in, speech out`,
  },
};

export interface Session {
  mode: Mode;
  chat: Chat<UIMessage>;
  live: AdkLiveTransport | null;
  /** What the user said, by the id of the assistant message that answered it. */
  heard: Map<string, string>;
  dispose(): void;
}

interface Handlers {
  bgm: BgmPlayer;
  speaker: PcmPlayer;
  onHeard: () => void;
  onConnection: (state: 'connecting' | 'open' | 'closed') => void;
}

/** A browser tool the user approved: run it and hand its result to the chat. */
export async function runApprovedBrowserTool(
  chat: Chat<UIMessage>,
  tool: string,
  toolCallId: string,
): Promise<void> {
  if (tool !== 'get_location') {
    await chat.addToolOutput({ state: 'output-error', tool, toolCallId, errorText: `Unknown browser tool ${tool}.` } as never);
    return;
  }
  try {
    const output = await getLocation();
    await chat.addToolOutput({ tool, toolCallId, output } as never);
  } catch (error) {
    await chat.addToolOutput({
      state: 'output-error',
      tool,
      toolCallId,
      errorText: error instanceof Error ? error.message : String(error),
    } as never);
  }
}

let chatCount = 0;

export function createSession(mode: Mode, handlers: Handlers): Session {
  const api = chatApi();
  const id = `${mode}-${Date.now().toString(36)}-${++chatCount}`;
  const heard = new Map<string, string>();
  let live: AdkLiveTransport | null = null;
  let transport: ChatTransport<UIMessage>;
  let chat: Chat<UIMessage>;
  if (mode === 'sse') {
    transport = new DefaultChatTransport({ api });
  } else if (mode === 'websocket') {
    transport = new WebSocketChatTransport({ url: chatSocketUrl(api) });
  } else {
    live = new AdkLiveTransport({
      url: api,
      modality: 'audio',
      onServerTurn: () => void chat.resumeStream(),
      onConnectionChange: handlers.onConnection,
    });
    transport = live;
  }
  chat = new Chat<UIMessage>({
    id,
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithAnswers,
    onToolCall: ({ toolCall }) => {
      // Browser tools without approval run as soon as they are called. Tools that
      // need approval (get_location) run from the Approve button instead.
      if (toolCall.toolName !== 'change_bgm') return;
      const track = Number((toolCall.input as { track?: unknown }).track);
      handlers.bgm
        .play(track)
        .then(state =>
          chat.addToolOutput({
            tool: 'change_bgm',
            toolCallId: toolCall.toolCallId,
            output: { success: true, track, playing: state.playing },
          } as never),
        )
        .catch(error =>
          chat.addToolOutput({
            state: 'output-error',
            tool: 'change_bgm',
            toolCallId: toolCall.toolCallId,
            errorText: error instanceof Error ? error.message : String(error),
          } as never),
        );
    },
    onData: part => {
      if (part.type === 'data-pcm') {
        handlers.speaker.play(part.data as PcmChunk);
      } else if (part.type === 'data-transcription') {
        const data = part.data as { role?: string; text?: string; finished?: boolean };
        const answering = chat.lastMessage;
        if (data.role === 'user' && data.text && answering?.role === 'assistant') {
          heard.set(answering.id, data.text);
          handlers.onHeard();
        }
      }
    },
  });
  return {
    mode,
    chat,
    live,
    heard,
    dispose() {
      void chat.stop();
      transport.close?.();
      live?.close();
    },
  };
}

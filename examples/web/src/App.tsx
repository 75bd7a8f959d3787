/** The adk-asgi chat page: useChat over SSE, WebSocket or live voice. */
import { useChat } from '@ai-sdk/react';
import {
  answerApproval,
  answerCredential,
  answerInput,
  FrameCapture,
  isCredentialRequest,
  isInputRequest,
  Microphone,
  PcmPlayer,
  refusedAnswer,
  reopenToolCall,
  signIn,
} from 'adk-asgi';
import { isToolUIPart } from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';

import { BgmBadge } from './components/BgmBadge';
import { Composer } from './components/Composer';
import { MessageView } from './components/MessageView';
import { Icon } from './components/Icon';
import { ModeSwitch } from './components/ModeSwitch';
import { Sidebar } from './components/Sidebar';
import type { PauseHandlers } from './components/PauseCard';
import type { ToolPart } from './components/ToolCard';
import { VoicePanel, type Sharing } from './components/VoicePanel';
import { BgmPlayer } from './lib/bgm';
import {
  deleteChat,
  evalSetUrl,
  listChats,
  loadChat,
  streamActive,
  type ChatSummary,
} from './lib/chats';
import { chatApi, pageInfo } from './lib/config';
import { createSession, MODES, newChatId, type ChatStart, type Mode } from './session';

const bgm = new BgmPlayer();
const speaker = new PcmPlayer();

function initialMode(): Mode {
  const mode = new URLSearchParams(location.search).get('mode');
  return mode === 'websocket' || mode === 'voice' ? mode : 'sse';
}

/** Keep the open chat in the address (`?chat=`), so a reload opens it again. */
function showInAddress(id: string | null) {
  const url = new URL(location.href);
  if (id == null) url.searchParams.delete('chat');
  else url.searchParams.set('chat', id);
  history.replaceState(null, '', url);
}

/** A chat from the server, ready to open: its messages, and whether a turn still streams
 * (then its unfinished answer comes from the stream, not from the history). */
async function openChat(api: string, id: string): Promise<(ChatStart & { resume: boolean }) | null> {
  const [messages, active] = await Promise.all([loadChat(api, id), streamActive(api, id)]);
  if (messages == null) return null;
  if (active && messages[messages.length - 1]?.role === 'assistant') messages.pop();
  return { id, messages, resume: active };
}

export function App() {
  const api = chatApi();
  const [mode, setMode] = useState<Mode>(initialMode);
  // The chat to open: a new one, unless the address names one (loaded below).
  const [start, setStart] = useState<(ChatStart & { resume: boolean }) | null>(() =>
    new URLSearchParams(location.search).has('chat')
      ? null
      : { id: newChatId(initialMode()), messages: [], resume: false },
  );
  const [chats, setChats] = useState<ChatSummary[]>([]);
  const [nextPage, setNextPage] = useState<string | null>(null);
  const [, setHeardVersion] = useState(0);
  const [connection, setConnection] = useState('not connected');
  const [inputError, setInputError] = useState<string | null>(null);
  const newChat = useCallback(() => {
    setStart({ id: newChatId(mode), messages: [], resume: false });
    showInAddress(null);
  }, [mode]);
  // The chat in the address (a reload), else a new one.
  useEffect(() => {
    const wanted = new URLSearchParams(location.search).get('chat');
    if (wanted == null) return;
    openChat(api, wanted).then(
      found => (found == null ? newChat() : setStart(found)),
      () => newChat(),
    );
    // once, at load
  }, []);
  const session = useMemo(
    () =>
      createSession(
        mode,
        {
          bgm,
          speaker,
          onHeard: () => setHeardVersion(v => v + 1),
          onConnection: state => setConnection(state === 'open' ? 'connected' : state),
          onInputError: ({ code, message }) => setInputError(`${code}: ${message}`),
        },
        start ?? { id: newChatId(mode), messages: [] },
      ),
    // a chat for each mode, and for each chat opened or started
    [mode, start],
  );
  useEffect(() => {
    if (start?.resume && session.mode === 'sse') void session.chat.resumeStream();
  }, [session, start]);
  const previous = useRef<typeof session | null>(null);
  useEffect(() => {
    // Close the chat we switched away from (not on StrictMode's re-mount).
    if (previous.current != null && previous.current !== session) previous.current.dispose();
    previous.current = session;
  }, [session]);
  const { messages, status, error, sendMessage, stop, clearError } = useChat({
    chat: session.chat,
  });

  // The sidebar: the first page again whenever a turn ends or the chat changes.
  const refreshChats = useCallback(() => {
    listChats(api).then(
      page => {
        setChats(page.chats);
        setNextPage(page.next);
      },
      () => {},
    );
  }, [api]);
  useEffect(() => {
    if (status === 'ready' || status === 'error') refreshChats();
  }, [status, session, refreshChats]);
  const moreChats = () =>
    void listChats(api, nextPage).then(page => {
      setChats(shown => [...shown, ...page.chats.filter(c => !shown.some(s => s.id === c.id))]);
      setNextPage(page.next);
    });
  const switchTo = (id: string) =>
    void openChat(api, id).then(found => {
      if (found == null) return refreshChats();
      setStart(found);
      showInAddress(id);
    });
  const remove = (id: string) =>
    void deleteChat(api, id).then(() => {
      if (id === session.chat.id) newChat();
      refreshChats();
    });
  useEffect(() => {
    // a chat that has messages is in the address; a new, empty one is not yet
    if (messages.length > 0) showInAddress(session.chat.id);
  }, [messages.length, session]);

  const bgmState = useSyncExternalStore(
    listener => bgm.subscribe(listener),
    () => bgm.state,
  );
  const [speakerState, setSpeakerState] = useState({ chunks: 0, seconds: 0, muted: false });
  useEffect(() => {
    speaker.onChange = () =>
      setSpeakerState({ chunks: speaker.chunks, seconds: speaker.seconds, muted: speaker.muted });
  }, []);

  const mic = useRef<Microphone | null>(null);
  const [recording, setRecording] = useState(false);
  const [level, setLevel] = useState(0);
  useEffect(
    () => () => {
      void mic.current?.stop();
      mic.current = null;
      setRecording(false);
    },
    [session],
  );

  const onTalk = async () => {
    const live = session.live;
    if (live == null) return;
    if (recording) {
      await mic.current?.stop();
      mic.current = null;
      setRecording(false);
      setLevel(0);
      live.stopAudio();
      return;
    }
    try {
      await live.open(session.chat.id);
      speaker.reset(); // barge in: drop what is still queued
      live.startAudio();
      const microphone = new Microphone();
      await microphone.start((pcm, peak) => {
        live.sendAudio(pcm);
        setLevel(peak);
      });
      mic.current = microphone;
      setRecording(true);
    } catch (err) {
      alert(`Microphone: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  // The camera or a shared screen: JPEG frames at 1 per second for the model to look at.
  const capture = useRef<FrameCapture | null>(null);
  const [sharing, setSharing] = useState<Sharing>(null);
  const [frames, setFrames] = useState(0);
  const stopSharing = () => {
    capture.current?.stop();
    capture.current = null;
    setSharing(null);
  };
  useEffect(() => stopSharing, [session]);

  const onShare = async (source: 'camera' | 'screen') => {
    const live = session.live;
    if (live == null) return;
    const was = sharing;
    stopSharing();
    if (was === source) return; // the same button again: off
    try {
      await live.open(session.chat.id);
      const frameCapture = source === 'camera' ? await FrameCapture.camera() : await FrameCapture.screen();
      capture.current = frameCapture;
      frameCapture.onEnded = () => {
        if (capture.current === frameCapture) stopSharing(); // "Stop sharing" in the browser
      };
      setSharing(source);
      setInputError(null);
      await frameCapture.start(frame => {
        try {
          live.sendImage(frame);
          setFrames(n => n + 1);
        } catch {
          if (capture.current === frameCapture) stopSharing(); // the connection is gone
        }
      });
    } catch (err) {
      stopSharing();
      alert(`${source === 'camera' ? 'Camera' : 'Screen'}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  // Approve / Deny; an approved browser tool (get_location) runs here, after the user's yes.
  const onAnswer = (part: ToolPart, approved: boolean) =>
    void answerApproval(session.chat, part, approved, { tools: session.tools });

  // A refused answer (invalid_input, invalid_credential): the call waits again, with why.
  const [refusals, setRefusals] = useState<Record<string, string>>({});
  const lastAnswered = useRef<string | null>(null);
  useEffect(() => {
    const refused = error ? refusedAnswer(error) : undefined;
    const callId = lastAnswered.current;
    if (refused == null || callId == null || !['invalid_input', 'invalid_credential'].includes(refused.code)) return;
    reopenToolCall(session.chat, callId);
    setRefusals(r => ({ ...r, [callId]: refused.message }));
    clearError();
  }, [error, session, clearError]);
  const pauses: PauseHandlers = {
    onInput: (part, value) => {
      lastAnswered.current = part.toolCallId;
      void answerInput(session.chat, part, value);
    },
    onCredential: (part, secret) => {
      lastAnswered.current = part.toolCallId;
      void answerCredential(session.chat, part, secret);
    },
    onSignIn: part => {
      // The callback continues the turn on the server: follow it when the popup is done.
      void signIn(part).then(() => session.chat.resumeStream());
    },
    refusal: toolCallId => refusals[toolCallId],
  };

  const busy = status === 'submitted' || status === 'streaming';
  const last = messages[messages.length - 1];
  const pendingApproval =
    last?.role === 'assistant' &&
    last.parts.some(p => isToolUIPart(p) && p.state === 'approval-requested');
  const pendingPause =
    last?.role === 'assistant' &&
    last.parts.some(p => isToolUIPart(p) && (isInputRequest(p) || isCredentialRequest(p)));
  const listRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    listRef.current?.scrollTo({ top: listRef.current.scrollHeight });
  }, [messages]);

  return (
    <div className="layout">
      <Sidebar
        chats={chats}
        current={session.chat.id}
        more={nextPage != null}
        onNew={newChat}
        onOpen={switchTo}
        onDelete={remove}
        onMore={moreChats}
        evalSetHref={id => evalSetUrl(api, id)}
      />
    <div className="app" data-mode={mode} data-status={status} data-chat={session.chat.id}>
      <header className="header">
        <div className="brand">
          <span className="logo">adk-asgi</span>
          <span className="tagline">Google ADK agent ⇄ AI SDK useChat</span>
        </div>
        <div className="header-right">
          <BgmBadge state={bgmState} onStop={() => bgm.stop()} />
          <ModeSwitch
            mode={mode}
            onChange={next => {
              setMode(next);
              setStart({ id: newChatId(next), messages: [], resume: false });
              showInAddress(null);
            }}
          />
        </div>
      </header>
      <div className="wire" data-testid="wire">
        <strong>{MODES[mode].transport}</strong> · {MODES[mode].wire(api)}
      </div>
      <main className="messages" ref={listRef}>
        {messages.length === 0 && (
          <div className="empty">
            <h1>{pageInfo().title}</h1>
            {pageInfo().description && <p>{pageInfo().description}</p>}
          </div>
        )}
        {messages.map((message, index) => (
          <div key={message.id}>
            {session.heard.has(message.id) && (
              <div className="message message-user" data-testid="heard">
                <div className="avatar">
                  <Icon name="mic" />
                </div>
                <div className="bubble">
                  <p className="text">{session.heard.get(message.id)}</p>
                </div>
              </div>
            )}
            <MessageView
              message={message}
              streaming={busy && index === messages.length - 1}
              onAnswer={onAnswer}
              pauses={pauses}
            />
          </div>
        ))}
        {status === 'submitted' && <div className="typing" aria-label="waiting">•••</div>}
        {error && (
          <div className="error" role="alert">
            {error.message}
            <button className="link" onClick={clearError}>
              dismiss
            </button>
          </div>
        )}
      </main>
      <footer className="footer">
        {mode === 'voice' && (
          <VoicePanel
            connection={connection}
            recording={recording}
            level={level}
            speaker={speakerState}
            muted={speakerState.muted}
            sharing={sharing}
            preview={sharing != null ? (capture.current?.stream ?? null) : null}
            frames={frames}
            inputError={inputError}
            onShare={source => void onShare(source)}
            onTalk={() => void onTalk()}
            onMute={() => {
              speaker.muted = !speaker.muted;
              setSpeakerState(s => ({ ...s, muted: speaker.muted }));
            }}
          />
        )}
        <Composer
          busy={busy}
          blocked={
            pendingApproval
              ? 'Answer the approval above to continue'
              : pendingPause
                ? 'Answer the question above to continue'
                : null
          }
          onSend={text => void sendMessage({ text })}
          onStop={() => void stop()}
        />
      </footer>
    </div>
    </div>
  );
}

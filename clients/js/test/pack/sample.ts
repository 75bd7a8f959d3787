/**
 * Type-checked by the packaging test in an empty project with the packed tarball and one
 * `ai` version: the package's declarations fit that version's types, as a user writes.
 */
import { AbstractChat, DefaultChatTransport, type ChatState, type ChatTransport, type UIMessage } from 'ai';
import {
  AdkLiveTransport,
  adkToolCallMetadata,
  answerCredential,
  answerInput,
  checkInput,
  decodePcm16,
  FrameCapture,
  initialValue,
  inputForm,
  isCredentialRequest,
  isInputRequest,
  lastAssistantMessageIsCompleteWithAnswers,
  liveUrl,
  Microphone,
  PcmPlayer,
  refusedAnswer,
  reopenToolCall,
  runBrowserTool,
  signIn,
  toolNameOf,
  type AdkLiveTransportOptions,
  type AdkMessageMetadata,
  type AdkToolCallMetadata,
  type AdkUIMessage,
  type BrowserTools,
  type FormField,
  type FrameCaptureOptions,
  type ImageFrame,
  type LiveInputError,
  type PcmData,
  type TranscriptionData,
  type WebSocketConstructor,
} from 'adk-asgi';

declare const state: ChatState<AdkUIMessage>;
declare const WebSocketImpl: WebSocketConstructor;

class MyChat extends AbstractChat<AdkUIMessage> {}

const options: AdkLiveTransportOptions = {
  url: liveUrl('/api/chat', { base: 'https://example.com/' }),
  modality: 'audio',
  webSocket: WebSocketImpl,
  onServerTurn: ({ chatId }) => console.log(chatId),
  onInputError: (error: LiveInputError) => console.warn(error.code, error.message),
};
const live = new AdkLiveTransport<AdkUIMessage>(options);
const transports: Array<ChatTransport<AdkUIMessage>> = [
  live,
  new DefaultChatTransport<AdkUIMessage>({ api: '/api/chat' }),
];
// a plain UIMessage chat takes the transport too
const plain: ChatTransport<UIMessage> = new AdkLiveTransport({ url: '/api/chat' });

const speaker = new PcmPlayer();
const heard: TranscriptionData[] = [];
const tools: BrowserTools = {
  change_bgm: async (input: { track: number }) => ({ success: true, track: input.track }),
};

const chat: MyChat = new MyChat({
  state,
  transport: transports[0],
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithAnswers,
  onToolCall: ({ toolCall }) => {
    void runBrowserTool(chat, toolCall, tools);
  },
  onData: part => {
    if (part.type === 'data-pcm') {
      const pcm: PcmData = part.data;
      speaker.play(pcm);
      const samples: Float32Array = decodePcm16(pcm);
      void samples;
    } else if (part.type === 'data-transcription') {
      heard.push(part.data);
      // @ts-expect-error: a transcription has no sampleRate
      void part.data.sampleRate;
    }
  },
});

const metadata: AdkMessageMetadata | undefined = chat.messages.at(-1)?.metadata;
const tokens: number | undefined = metadata?.usage?.totalTokens;
for (const part of chat.messages.at(-1)?.parts ?? []) {
  if (part.type.startsWith('tool-') || part.type === 'dynamic-tool') {
    const name: string = toolNameOf(part);
    const adk: AdkToolCallMetadata | undefined = adkToolCallMetadata(part);
    console.log(name, adk?.approvalId, adk?.hint);
  }
}

async function talk(): Promise<void> {
  await live.open(chat.id);
  live.startAudio();
  const microphone = new Microphone();
  await microphone.start((pcm: ArrayBuffer, level: number) => {
    live.sendAudio(pcm);
    void level;
  });
  live.stopAudio();
  live.interrupt();
  await microphone.stop();
  speaker.reset();
  live.close();
  const open: boolean = live.connected;
  void open;
}

async function look(screen: boolean): Promise<void> {
  const options: FrameCaptureOptions = { framesPerSecond: 1, maxSize: 768, mimeType: 'image/jpeg', quality: 0.7 };
  const capture: FrameCapture = screen
    ? await FrameCapture.screen(options)
    : await FrameCapture.camera({ ...options, video: { facingMode: 'user' } });
  const stream: MediaStream = capture.stream;
  capture.onEnded = () => console.log('stopped sharing', stream.id);
  await capture.start((frame: ImageFrame) => live.sendImage(frame));
  live.sendImage({ mimeType: 'image/png', data: new Uint8Array(8) });
  const sent: number = capture.frames;
  const running: boolean = capture.running;
  capture.stop();
  void [sent, running];
}

// A request for input and a credential request, answered from a part of the chat.
async function pauses(chat: MyChat, error: Error | undefined): Promise<void> {
  const message = chat.messages[chat.messages.length - 1];
  for (const part of message?.parts ?? []) {
    if (!('toolCallId' in part)) continue;
    if (isInputRequest(part)) {
      const form: FormField = inputForm(part.input.responseSchema);
      const value = initialValue(form);
      if (checkInput(form, value).length === 0) await answerInput(chat, part, value);
    } else if (isCredentialRequest(part)) {
      if (part.input.scheme === 'oauth2') {
        if ((await signIn(part)).ok) await chat.resumeStream();
      } else {
        await answerCredential(chat, part, 'the-key');
      }
    }
  }
  if (error && refusedAnswer(error)?.code === 'invalid_input') reopenToolCall(chat, 'ask_budget');
}

void [plain, tokens, talk, look, pauses];

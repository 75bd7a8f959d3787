/**
 * adk-asgi for the browser: what an AI SDK (`ai` 5, 6 or 7) chat UI needs beyond the
 * SDK itself to talk to an adk-asgi server.
 */
export {
  AdkLiveTransport,
  type AdkLiveTransportOptions,
  type LiveInputError,
  type WebSocketConstructor,
  type WebSocketLike,
} from './live-transport';
export { liveUrl, type LiveUrlOptions } from './live-url';
export { lastAssistantMessageIsCompleteWithAnswers } from './send-automatically';
export {
  answerApproval,
  runBrowserTool,
  toolNameOf,
  type ApprovalTarget,
  type ApprovalToolPart,
  type BrowserToolCall,
  type BrowserTools,
  type ToolAnswerTarget,
} from './browser-tools';
export {
  answerCredential,
  answerInput,
  checkInput,
  compactInput,
  CREDENTIAL_TOOL,
  initialValue,
  INPUT_TOOL,
  inputForm,
  isCredentialRequest,
  isInputRequest,
  refusedAnswer,
  reopenToolCall,
  signIn,
  SIGN_IN_MESSAGE,
  type AdkCredentialRequest,
  type AdkInputRequest,
  type FormField,
  type JsonSchema,
  type PausePart,
  type SignInResult,
} from './pauses';
export { decodePcm16, Microphone, PcmPlayer } from './audio';
export {
  FrameCapture,
  type FrameCaptureOptions,
  type FrameSourceOptions,
  type ImageFrame,
  type ImageMimeType,
} from './frames';
export {
  adkToolCallMetadata,
  type AdkDataTypes,
  type AdkFileMetadata,
  type AdkMessageMetadata,
  type AdkSourceMetadata,
  type AdkToolCallMetadata,
  type AdkUIMessage,
  type AdkUsage,
  type GroundingCitation,
  type GroundingData,
  type GroundingSupport,
  type PcmData,
  type QueuedData,
  type TranscriptionData,
} from './types';

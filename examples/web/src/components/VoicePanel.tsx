/** Voice mode: talk with the microphone, hear the answer, show the camera or a screen. */
import { Icon } from './Icon';

export type Sharing = 'camera' | 'screen' | null;

export function VoicePanel({
  connection,
  recording,
  level,
  speaker,
  muted,
  sharing,
  preview,
  frames,
  inputError,
  onTalk,
  onMute,
  onShare,
}: {
  connection: string;
  recording: boolean;
  level: number;
  speaker: { chunks: number; seconds: number };
  muted: boolean;
  /** What the model sees: the camera, a shared screen, or nothing. */
  sharing: Sharing;
  preview: MediaStream | null;
  /** Frames sent to the model so far. */
  frames: number;
  /** The server's last refusal of a frame (`onInputError`). */
  inputError: string | null;
  onTalk: () => void;
  onMute: () => void;
  onShare: (source: 'camera' | 'screen') => void;
}) {
  return (
    <div className="voice" data-testid="voice">
      <button
        className={`btn mic ${recording ? 'mic-on' : ''}`}
        onClick={onTalk}
        aria-pressed={recording}
        data-testid="mic"
      >
        <Icon name={recording ? 'stop' : 'mic'} /> {recording ? 'Stop and send' : 'Talk'}
      </button>
      <div className="meter" aria-hidden>
        <div style={{ width: `${Math.min(100, Math.round(level * 300))}%` }} />
      </div>
      <button className="btn btn-ghost" onClick={onMute} aria-pressed={muted}>
        <Icon name={muted ? 'mute' : 'speaker'} /> {muted ? 'Muted' : 'Speaker on'}
      </button>
      <button
        className={`btn btn-ghost ${sharing === 'camera' ? 'share-on' : ''}`}
        onClick={() => onShare('camera')}
        aria-pressed={sharing === 'camera'}
        data-testid="camera"
      >
        <Icon name="camera" /> {sharing === 'camera' ? 'Camera on' : 'Camera'}
      </button>
      <button
        className={`btn btn-ghost ${sharing === 'screen' ? 'share-on' : ''}`}
        onClick={() => onShare('screen')}
        aria-pressed={sharing === 'screen'}
        data-testid="screen"
      >
        <Icon name="screen" /> {sharing === 'screen' ? 'Sharing screen' : 'Share screen'}
      </button>
      {preview != null && (
        <video
          className="preview"
          data-testid="preview"
          autoPlay
          muted
          playsInline
          ref={video => {
            if (video != null && video.srcObject !== preview) video.srcObject = preview;
          }}
        />
      )}
      <span className="voice-stats" data-testid="speaker" data-chunks={speaker.chunks}>
        played {speaker.seconds.toFixed(1)} s of speech · {connection}
      </span>
      <span className="voice-stats" data-testid="frames" data-count={frames}>
        {frames} {frames === 1 ? 'frame' : 'frames'} sent
      </span>
      {inputError != null && (
        <span className="voice-error" data-testid="input-error">
          {inputError}
        </span>
      )}
    </div>
  );
}

/** Voice mode: talk with the microphone, hear the answer. */
import { Icon } from './Icon';

export function VoicePanel({
  connection,
  recording,
  level,
  speaker,
  muted,
  onTalk,
  onMute,
}: {
  connection: string;
  recording: boolean;
  level: number;
  speaker: { chunks: number; seconds: number };
  muted: boolean;
  onTalk: () => void;
  onMute: () => void;
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
      <span className="voice-stats" data-testid="speaker" data-chunks={speaker.chunks}>
        played {speaker.seconds.toFixed(1)} s of speech · {connection}
      </span>
    </div>
  );
}

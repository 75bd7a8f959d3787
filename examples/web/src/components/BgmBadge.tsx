/** What the `change_bgm` browser tool is playing. */
import { Icon } from './Icon';
import type { BgmState } from '../lib/bgm';

export function BgmBadge({ state, onStop }: { state: BgmState; onStop: () => void }) {
  if (state.track == null) return null;
  return (
    <div
      className={`bgm ${state.playing ? 'bgm-on' : ''}`}
      data-testid="bgm"
      data-track={state.track}
      data-playing={state.playing}
      data-audio={state.contextState}
    >
      <span className="bgm-note">
        <Icon name="music" size={14} />
      </span>
      Track {state.track} {state.playing ? 'playing' : 'stopped'}
      {state.playing && (
        <button className="link" onClick={onStop}>
          stop
        </button>
      )}
    </div>
  );
}

/** SSE, WebSocket (protocol B) or Voice (protocol A, audio). */
import { MODES, type Mode } from '../session';

export function ModeSwitch({ mode, onChange }: { mode: Mode; onChange: (mode: Mode) => void }) {
  return (
    <div className="segmented" role="radiogroup" aria-label="Transport">
      {(Object.keys(MODES) as Mode[]).map(key => (
        <button
          key={key}
          role="radio"
          aria-checked={mode === key}
          className={mode === key ? 'active' : ''}
          onClick={() => onChange(key)}
        >
          {MODES[key].label}
        </button>
      ))}
    </div>
  );
}

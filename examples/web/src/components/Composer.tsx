/** The input line: suggestions, text box, Send / Stop. */
import { useState, type FormEvent } from 'react';

import { pageInfo } from '../lib/config';

export function Composer({
  busy,
  blocked,
  onSend,
  onStop,
}: {
  busy: boolean;
  blocked: string | null;
  onSend: (text: string) => void;
  onStop: () => void;
}) {
  const [text, setText] = useState('');
  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const value = text.trim();
    if (!value || busy || blocked) return;
    onSend(value);
    setText('');
  };
  return (
    <div className="composer">
      <div className="chips">
        {pageInfo().suggestions.map(s => (
          <button key={s} className="chip" disabled={busy || blocked != null} onClick={() => onSend(s)}>
            {s}
          </button>
        ))}
      </div>
      <form className="input-row" onSubmit={submit}>
        <input
          aria-label="Message"
          placeholder={blocked ?? 'Message…'}
          value={text}
          disabled={blocked != null}
          onChange={event => setText(event.target.value)}
        />
        {busy ? (
          <button type="button" className="btn btn-stop" onClick={onStop}>
            Stop
          </button>
        ) : (
          <button type="submit" className="btn btn-send" disabled={!text.trim() || blocked != null}>
            Send
          </button>
        )}
      </form>
    </div>
  );
}

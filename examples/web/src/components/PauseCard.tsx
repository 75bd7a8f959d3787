/**
 * What the agent asks the user besides approvals: a form for a request for input (built
 * from its JSON Schema), a password field for an API key or token, "Connect your account"
 * for an OAuth2 sign-in (a popup).
 */
import {
  checkInput,
  initialValue,
  inputForm,
  type AdkCredentialRequest,
  type AdkInputRequest,
  type FormField,
} from 'adk-asgi';
import { useMemo, useState, type FormEvent } from 'react';

import { Icon } from './Icon';
import type { ToolPart } from './ToolCard';

export interface PauseHandlers {
  onInput: (part: ToolPart, value: unknown) => void;
  onCredential: (part: ToolPart, secret: string) => void;
  onSignIn: (part: ToolPart) => void;
  /** Why the server refused this call's last answer (shown next to the form). */
  refusal: (toolCallId: string) => string | undefined;
}

export function InputCard({ part, handlers }: { part: ToolPart; handlers: PauseHandlers }) {
  const request = (part.input ?? {}) as AdkInputRequest;
  const form = useMemo(() => inputForm(request.responseSchema ?? null), [request.responseSchema]);
  const [value, setValue] = useState<unknown>(() => initialValue(form));
  const [problems, setProblems] = useState<Array<[string, string]>>([]);
  const waiting = part.state === 'input-available';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = checkInput(form, value);
    setProblems(found);
    if (found.length === 0) handlers.onInput(part, value);
  };
  const refused = handlers.refusal(part.toolCallId);
  return (
    <div className={`tool ${waiting ? 'tool-ask' : 'tool-done'}`} data-testid="tool-adk_request_input" data-state={part.state}>
      <div className="tool-head">
        <span className="tool-icon">
          <Icon name="tool" />
        </span>
        <span className="tool-title">{request.message ?? 'The agent needs your input'}</span>
        <span className={`badge badge-${waiting ? 'ask' : 'done'}`}>{waiting ? 'Needs your answer' : 'Answered'}</span>
      </div>
      {waiting ? (
        <form className="pause-form" onSubmit={submit} aria-label="Answer" noValidate>
          <Field form={form} value={value} onChange={setValue} path="$" problems={problems} />
          {refused && (
            <div className="tool-error" data-testid="refused">
              {refused}
            </div>
          )}
          <div className="approval-buttons">
            <button className="btn btn-approve" type="submit">
              Send answer
            </button>
          </div>
        </form>
      ) : (
        part.state === 'output-available' && (
          <div className="tool-result" data-testid="tool-result">
            {JSON.stringify(part.output)}
          </div>
        )
      )}
    </div>
  );
}

function Field({
  form,
  value,
  onChange,
  path,
  problems,
}: {
  form: FormField;
  value: unknown;
  onChange: (value: unknown) => void;
  path: string;
  problems: Array<[string, string]>;
}) {
  const problem = problems.find(([where]) => where === path)?.[1];
  const label = (
    <span className="field-label">
      {form.label}
      {form.required ? ' *' : ''}
    </span>
  );
  const hint = (
    <>
      {form.description && <span className="field-hint">{form.description}</span>}
      {problem && (
        <span className="field-problem" role="alert">
          {problem}
        </span>
      )}
    </>
  );
  switch (form.kind) {
    case 'string':
      return (
        <label className="field" data-field={path}>
          {label}
          <input
            type={form.format === 'email' ? 'email' : 'text'}
            value={typeof value === 'string' ? value : ''}
            onChange={e => onChange(e.target.value === '' && !form.required ? undefined : e.target.value)}
          />
          {hint}
        </label>
      );
    case 'number':
    case 'integer':
      return (
        <label className="field" data-field={path}>
          {label}
          <input
            type="number"
            step={form.kind === 'integer' ? 1 : 'any'}
            min={form.minimum}
            max={form.maximum}
            value={typeof value === 'number' ? value : ''}
            onChange={e => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
          />
          {hint}
        </label>
      );
    case 'boolean':
      return (
        <label className="field field-check" data-field={path}>
          <input type="checkbox" checked={value === true} onChange={e => onChange(e.target.checked)} />
          {label}
          {hint}
        </label>
      );
    case 'enum':
      return (
        <label className="field" data-field={path}>
          {label}
          <select
            value={value === undefined ? '' : JSON.stringify(value)}
            onChange={e => onChange(e.target.value === '' ? undefined : JSON.parse(e.target.value))}
          >
            {!form.required && <option value="">—</option>}
            {form.options.map(option => (
              <option key={JSON.stringify(option)} value={JSON.stringify(option)}>
                {String(option)}
              </option>
            ))}
          </select>
          {hint}
        </label>
      );
    case 'object': {
      const record = (value ?? {}) as Record<string, unknown>;
      return (
        <fieldset className="field-group" data-field={path}>
          {path !== '$' && <legend>{form.label}</legend>}
          {form.fields.map(sub => (
            <Field
              key={sub.name}
              form={sub}
              value={record[sub.name]}
              path={`${path}.${sub.name}`}
              problems={problems}
              onChange={next => onChange({ ...record, [sub.name]: next })}
            />
          ))}
          {hint}
        </fieldset>
      );
    }
    case 'array': {
      const items = Array.isArray(value) ? value : [];
      return (
        <fieldset className="field-group" data-field={path}>
          <legend>{form.label}</legend>
          {items.map((item, index) => (
            <div className="field-item" key={index}>
              <Field
                form={form.item}
                value={item}
                path={`${path}[${index}]`}
                problems={problems}
                onChange={next => onChange(items.map((old, i) => (i === index ? next : old)))}
              />
              <button type="button" className="btn btn-ghost" onClick={() => onChange(items.filter((_, i) => i !== index))}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" className="btn" onClick={() => onChange([...items, initialValue(form.item)])}>
            Add {form.item.kind === 'object' ? form.item.label.toLowerCase() : 'item'}
          </button>
          {hint}
        </fieldset>
      );
    }
    default:
      return <JsonField label={label} hint={hint} path={path} value={value} onChange={onChange} />;
  }
}

function JsonField({
  label,
  hint,
  path,
  value,
  onChange,
}: {
  label: React.ReactNode;
  hint: React.ReactNode;
  path: string;
  value: unknown;
  onChange: (value: unknown) => void;
}) {
  const [text, setText] = useState(() => (value === undefined ? '' : JSON.stringify(value, null, 2)));
  const [bad, setBad] = useState(false);
  return (
    <label className="field" data-field={path}>
      {label}
      <textarea
        className="json"
        rows={4}
        value={text}
        onChange={e => {
          setText(e.target.value);
          try {
            onChange(e.target.value.trim() === '' ? undefined : JSON.parse(e.target.value));
            setBad(false);
          } catch {
            setBad(true);
          }
        }}
      />
      {bad && <span className="field-problem">not valid JSON yet</span>}
      {hint}
    </label>
  );
}

export function CredentialCard({ part, handlers }: { part: ToolPart; handlers: PauseHandlers }) {
  const request = (part.input ?? {}) as AdkCredentialRequest;
  const [secret, setSecret] = useState('');
  const waiting = part.state === 'input-available';
  const oauth = request.scheme === 'oauth2';
  const done = oauth ? 'Connected' : 'Provided';
  const refused = handlers.refusal(part.toolCallId);
  return (
    <div className={`tool ${waiting ? 'tool-ask' : 'tool-done'}`} data-testid="tool-adk_request_credential" data-state={part.state}>
      <div className="tool-head">
        <span className="tool-icon">
          <Icon name="tool" />
        </span>
        <span className="tool-title">{oauth ? 'Connect your account' : request.scheme === 'apiKey' ? 'API key needed' : 'Access token needed'}</span>
        <span className={`badge badge-${waiting ? 'ask' : 'done'}`}>{waiting ? 'Needs you' : done}</span>
      </div>
      <div className="tool-summary">{request.message}</div>
      {waiting && oauth && (
        <div className="approval-buttons">
          <button className="btn btn-approve" onClick={() => handlers.onSignIn(part)}>
            Connect your account
          </button>
        </div>
      )}
      {waiting && !oauth && (
        <form
          className="pause-form"
          aria-label="Credential"
          onSubmit={e => {
            e.preventDefault();
            if (secret.trim()) handlers.onCredential(part, secret.trim());
          }}
        >
          <label className="field">
            <span className="field-label">
              {request.scheme === 'apiKey' ? `API key${request.name ? ` (${request.name})` : ''}` : 'Token'}
            </span>
            <input
              type="password"
              autoComplete="off"
              value={secret}
              onChange={e => setSecret(e.target.value)}
              aria-label={request.scheme === 'apiKey' ? 'API key' : 'Token'}
            />
          </label>
          {refused && (
            <div className="tool-error" data-testid="refused">
              {refused}
            </div>
          )}
          <div className="approval-buttons">
            <button className="btn btn-approve" type="submit">
              Use it
            </button>
          </div>
        </form>
      )}
    </div>
  );
}

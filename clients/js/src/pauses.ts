/**
 * The pauses an adk-asgi server asks the page to answer besides approvals: a request for
 * input (`tool-adk_request_input`: a form built from its JSON Schema) and a request for a
 * credential (`tool-adk_request_credential`: an API key or token field, or "Connect your
 * account" for an OAuth2 sign-in in a popup). Both are ordinary client tool calls answered
 * with the AI SDK's own `addToolOutput`.
 */
import type { ToolAnswerTarget } from './browser-tools';

/** A JSON Schema (the subset the form understands; anything else is a JSON box). */
export type JsonSchema = { [key: string]: unknown };

/** `input` of a `tool-adk_request_input` part. */
export interface AdkInputRequest {
  message?: string | null;
  /** What the agent sends along (e.g. what the question is about). */
  payload?: unknown;
  /** What the answer must be; none: any JSON value. */
  responseSchema?: JsonSchema | null;
}

/** `input` of a `tool-adk_request_credential` part: what is asked, never a secret. */
export interface AdkCredentialRequest {
  scheme: 'apiKey' | 'bearer' | 'oauth2';
  message: string;
  /** The tool call that needs the credential (its result follows the answer). */
  functionCallId: string;
  /** apiKey: where the key goes (`header`, `query`, `cookie`) and under which name. */
  in?: string;
  name?: string;
  bearerFormat?: string;
  /** oauth2: the provider's sign-in page (open it in a popup: `signIn`). */
  authUri?: string;
  scopes?: string[];
}

/** The fields of a tool part the helpers read. */
export interface PausePart {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  toolName?: string;
}

export const INPUT_TOOL = 'adk_request_input';
export const CREDENTIAL_TOOL = 'adk_request_credential';
/** The `type` of the message the OAuth2 callback page posts to its opener. */
export const SIGN_IN_MESSAGE = 'adk-asgi:oauth';

function toolName(part: PausePart): string {
  return part.type === 'dynamic-tool' ? String(part.toolName) : part.type.replace(/^tool-/, '');
}

/** The part asks the user for input and waits for it. */
export function isInputRequest(part: PausePart): part is PausePart & { input: AdkInputRequest } {
  return toolName(part) === INPUT_TOOL && part.state === 'input-available';
}

/** The part asks the user for a credential and waits for it. */
export function isCredentialRequest(
  part: PausePart,
): part is PausePart & { input: AdkCredentialRequest } {
  return toolName(part) === CREDENTIAL_TOOL && part.state === 'input-available';
}

// -- the form -----------------------------------------------------------------------------

interface FieldBase {
  /** The property name (`''` for the root). */
  name: string;
  label: string;
  description?: string;
  required: boolean;
  /** `null` is an accepted value (`Optional[...]` in pydantic). */
  nullable: boolean;
  default?: unknown;
}

/** One field of the form a JSON Schema describes (`inputForm`). */
export type FormField =
  | (FieldBase & {
      kind: 'string';
      minLength?: number;
      maxLength?: number;
      pattern?: string;
      format?: string;
    })
  | (FieldBase & {
      kind: 'number' | 'integer';
      minimum?: number;
      maximum?: number;
      exclusiveMinimum?: number;
      exclusiveMaximum?: number;
    })
  | (FieldBase & { kind: 'boolean' })
  | (FieldBase & { kind: 'enum'; options: unknown[] })
  | (FieldBase & { kind: 'object'; fields: FormField[] })
  | (FieldBase & { kind: 'array'; item: FormField; minItems?: number; maxItems?: number })
  | (FieldBase & { kind: 'json' });

const MAX_DEPTH = 8;

/**
 * The form for a JSON Schema: strings, numbers, integers, booleans, enums, and objects
 * and arrays of these; anything else (or a schema it cannot read) is a `json` field.
 * `$ref`s into `$defs`/`definitions` and pydantic's `Optional` (`anyOf` with `null`) are
 * followed.
 */
export function inputForm(schema: JsonSchema | null | undefined): FormField {
  if (schema == null) return { kind: 'json', name: '', label: 'Answer', required: true, nullable: true };
  return field(schema, schema, '', true, 0);
}

function resolve(root: JsonSchema, schema: JsonSchema, depth: number): JsonSchema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 16; hops++) {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(current.$ref);
    const defs = match ? (root[match[1]] as Record<string, JsonSchema> | undefined) : undefined;
    const target = match && defs ? defs[decodeURIComponent(match[2])] : undefined;
    if (target == null || depth > MAX_DEPTH) return {};
    const { $ref: _ref, ...rest } = current;
    current = { ...target, ...rest };
  }
  return current;
}

function field(root: JsonSchema, raw: JsonSchema, name: string, required: boolean, depth: number): FormField {
  let schema = resolve(root, raw, depth);
  let nullable = false;
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(union)) {
    const options = union.filter(o => !(o && (o as JsonSchema).type === 'null'));
    nullable = options.length < union.length;
    if (options.length === 1) {
      const { anyOf: _a, oneOf: _o, ...rest } = schema;
      schema = { ...resolve(root, options[0], depth), ...rest };
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    const { allOf, ...rest } = schema;
    schema = { ...resolve(root, allOf[0] as JsonSchema, depth), ...rest };
  }
  let type = schema.type;
  if (Array.isArray(type)) {
    const kinds = type.filter(t => t !== 'null');
    nullable = nullable || kinds.length < type.length;
    type = kinds.length === 1 ? kinds[0] : undefined;
  }
  const base: FieldBase = {
    name,
    label: typeof schema.title === 'string' ? schema.title : humanize(name) || 'Answer',
    required,
    nullable,
  };
  if (typeof schema.description === 'string') base.description = schema.description;
  if ('default' in schema) base.default = schema.default;
  const num = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  if (depth > MAX_DEPTH) return { ...base, kind: 'json' };
  if (Array.isArray(schema.enum)) return { ...base, kind: 'enum', options: schema.enum };
  if ('const' in schema) return { ...base, kind: 'enum', options: [schema.const] };
  switch (type) {
    case 'string':
      return {
        ...base,
        kind: 'string',
        minLength: num('minLength'),
        maxLength: num('maxLength'),
        pattern: typeof schema.pattern === 'string' ? schema.pattern : undefined,
        format: typeof schema.format === 'string' ? schema.format : undefined,
      };
    case 'number':
    case 'integer':
      return {
        ...base,
        kind: type,
        minimum: num('minimum'),
        maximum: num('maximum'),
        exclusiveMinimum: num('exclusiveMinimum'),
        exclusiveMaximum: num('exclusiveMaximum'),
      };
    case 'boolean':
      return { ...base, kind: 'boolean' };
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const needed = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
      if (Object.keys(properties).length === 0) return { ...base, kind: 'json' };
      return {
        ...base,
        kind: 'object',
        fields: Object.entries(properties).map(([key, sub]) => field(root, sub, key, needed.has(key), depth + 1)),
      };
    }
    case 'array': {
      const items = schema.items;
      if (items == null || typeof items !== 'object' || Array.isArray(items)) return { ...base, kind: 'json' };
      return {
        ...base,
        kind: 'array',
        item: field(root, items as JsonSchema, 'item', true, depth + 1),
        minItems: num('minItems'),
        maxItems: num('maxItems'),
      };
    }
    default:
      return { ...base, kind: 'json' };
  }
}

function humanize(name: string): string {
  const words = name.replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A field's starting value: its default, else empty (`undefined` for an optional one). */
export function initialValue(form: FormField): unknown {
  if (form.default !== undefined) return structuredClone(form.default);
  switch (form.kind) {
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const sub of form.fields) {
        const start = initialValue(sub);
        if (start !== undefined) value[sub.name] = start;
      }
      return value;
    }
    case 'array':
      return [];
    case 'boolean':
      return form.required ? false : undefined;
    default:
      return undefined;
  }
}

/**
 * What is wrong with a value for the form, as `[path, problem]` pairs (none: it can be
 * sent). A first check in the page; the server checks the answer against the schema
 * itself (`422 invalid_input`).
 */
export function checkInput(form: FormField, value: unknown, path = '$'): Array<[string, string]> {
  if (value === undefined) return form.required ? [[path, 'is required']] : [];
  if (value === null) return form.nullable || form.kind === 'json' ? [] : [[path, 'is required']];
  switch (form.kind) {
    case 'string': {
      if (typeof value !== 'string') return [[path, 'must be text']];
      const problems: Array<[string, string]> = [];
      if (form.minLength != null && value.length < form.minLength)
        problems.push([path, form.minLength === 1 ? 'is required' : `needs at least ${form.minLength} characters`]);
      if (form.maxLength != null && value.length > form.maxLength)
        problems.push([path, `allows at most ${form.maxLength} characters`]);
      if (form.pattern != null && !safeTest(form.pattern, value)) problems.push([path, 'has the wrong format']);
      return problems;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return [[path, 'must be a number']];
      if (form.kind === 'integer' && !Number.isInteger(value)) return [[path, 'must be a whole number']];
      if (form.minimum != null && value < form.minimum) return [[path, `must be at least ${form.minimum}`]];
      if (form.maximum != null && value > form.maximum) return [[path, `must be at most ${form.maximum}`]];
      if (form.exclusiveMinimum != null && value <= form.exclusiveMinimum)
        return [[path, `must be more than ${form.exclusiveMinimum}`]];
      if (form.exclusiveMaximum != null && value >= form.exclusiveMaximum)
        return [[path, `must be less than ${form.exclusiveMaximum}`]];
      return [];
    }
    case 'boolean':
      return typeof value === 'boolean' ? [] : [[path, 'must be yes or no']];
    case 'enum':
      return form.options.some(o => JSON.stringify(o) === JSON.stringify(value)) ? [] : [[path, 'must be one of the choices']];
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return [[path, 'must be an object']];
      const record = value as Record<string, unknown>;
      return form.fields.flatMap(sub => checkInput(sub, record[sub.name], `${path}.${sub.name}`));
    }
    case 'array': {
      if (!Array.isArray(value)) return [[path, 'must be a list']];
      const problems: Array<[string, string]> = [];
      if (form.minItems != null && value.length < form.minItems) problems.push([path, `needs at least ${form.minItems} items`]);
      if (form.maxItems != null && value.length > form.maxItems) problems.push([path, `allows at most ${form.maxItems} items`]);
      value.forEach((item, index) => problems.push(...checkInput(form.item, item, `${path}[${index}]`)));
      return problems;
    }
    default:
      return [];
  }
}

function safeTest(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return true; // a pattern JavaScript cannot read: the server decides
  }
}

/** A value without the optional fields left empty (`undefined`), as JSON sends it. */
export function compactInput(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compactInput);
  if (value != null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, compactInput(v)]),
    );
  }
  return value;
}

// -- answers ------------------------------------------------------------------------------

/** Answer a request for input with `value` (`addToolOutput`). */
export async function answerInput(chat: ToolAnswerTarget, part: PausePart, value: unknown): Promise<void> {
  await chat.addToolOutput({ tool: INPUT_TOOL, toolCallId: part.toolCallId, output: compactInput(value) });
}

/**
 * Answer a request for an API key or token (`addToolOutput` with `{apiKey}` or `{token}`).
 * The server keeps the secret out of every stream and replaces the part's output with
 * `{status: "provided"}`; send only the last message with each request
 * (`prepareSendMessagesRequest`) so the secret is not sent again with later turns.
 */
export async function answerCredential(chat: ToolAnswerTarget, part: PausePart, secret: string): Promise<void> {
  const request = part.input as AdkCredentialRequest;
  if (request.scheme === 'oauth2') throw new Error('an OAuth2 request is answered by signing in (signIn)');
  const output = request.scheme === 'apiKey' ? { apiKey: secret } : { token: secret };
  await chat.addToolOutput({ tool: CREDENTIAL_TOOL, toolCallId: part.toolCallId, output });
}

/** The end of a sign-in: the callback told the page, or the user closed the popup. */
export interface SignInResult {
  ok: boolean;
  /** Why not: the provider's error code, `closed`, or `blocked` (no popup). */
  error?: string;
}

/**
 * Open an OAuth2 request's `authUri` in a popup; resolves when its callback page tells this
 * page (or the popup closes). The server continues the turn itself after the callback:
 * follow it with `chat.resumeStream()`.
 *
 * ```ts
 * const done = await signIn(part);
 * if (done.ok) await chat.resumeStream();
 * ```
 */
export function signIn(
  part: PausePart,
  options: { window?: Window; features?: string; pollMs?: number } = {},
): Promise<SignInResult> {
  const request = part.input as AdkCredentialRequest;
  const view = options.window ?? globalThis.window;
  if (request.scheme !== 'oauth2' || typeof request.authUri !== 'string') {
    return Promise.reject(new Error('signIn: the part is not an OAuth2 request'));
  }
  const popup = view.open(request.authUri, `adk-asgi-sign-in-${part.toolCallId}`, options.features ?? 'popup,width=520,height=680');
  if (popup == null) return Promise.resolve({ ok: false, error: 'blocked' });
  return new Promise(resolve => {
    let done = false;
    const finish = (result: SignInResult) => {
      if (done) return;
      done = true;
      view.removeEventListener('message', onMessage);
      clearInterval(timer);
      resolve(result);
    };
    const onMessage = (event: MessageEvent) => {
      const data = event.data as { type?: unknown; ok?: unknown; error?: unknown; toolCallId?: unknown } | null;
      if (event.source !== popup || data?.type !== SIGN_IN_MESSAGE) return;
      if (data.toolCallId != null && data.toolCallId !== part.toolCallId) return;
      finish(data.ok === true ? { ok: true } : { ok: false, error: String(data.error ?? 'failed') });
    };
    view.addEventListener('message', onMessage);
    // A provider page may cut `window.opener` (COOP): the popup's closing ends it too.
    const timer = setInterval(() => {
      if (popup.closed) finish({ ok: false, error: 'closed' });
    }, options.pollMs ?? 500);
  });
}

/** The server's error for a refused answer (`{"error": {code, message}}`), if it is one. */
export function refusedAnswer(error: unknown): { code: string; message: string } | undefined {
  const text = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const code = body.error?.code;
    return typeof code === 'string' ? { code, message: String(body.error?.message ?? '') } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Put an answered tool part back to waiting (`input-available`, its output dropped), after
 * the server refused the answer (`invalid_input`, `invalid_credential`): the user answers
 * again. `chat` is an AI SDK `Chat` (its `messages` are settable).
 */
export function reopenToolCall(chat: { messages: Array<{ parts: unknown[] }> }, toolCallId: string): void {
  chat.messages = chat.messages.map(message => ({
    ...message,
    parts: message.parts.map(part => {
      const tool = part as { toolCallId?: string; state?: string };
      if (tool.toolCallId !== toolCallId || !tool.state?.startsWith('output-')) return part;
      const { output: _output, errorText: _error, ...rest } = part as Record<string, unknown>;
      return { ...rest, state: 'input-available' };
    }),
  }));
}

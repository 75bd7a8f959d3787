/**
 * The pause helpers without a server: the form a JSON Schema gives (pydantic's output
 * included), the page's first check of an answer, and what the answers send.
 */
import { describe, expect, it } from 'vitest';

import {
  answerCredential,
  answerInput,
  checkInput,
  initialValue,
  inputForm,
  isCredentialRequest,
  isInputRequest,
  refusedAnswer,
  reopenToolCall,
  type FormField,
} from '../src/pauses';

// What pydantic 2 makes of tests/agents/trips: Budget (amount, currency enum, flexible,
// travellers: list[Traveller]) with Traveller in $defs and an Optional age.
const BUDGET = {
  $defs: {
    Traveller: {
      properties: {
        name: { description: 'Who travels', minLength: 1, title: 'Name', type: 'string' },
        age: { anyOf: [{ maximum: 130, minimum: 0, type: 'integer' }, { type: 'null' }], default: null, title: 'Age' },
      },
      required: ['name'],
      title: 'Traveller',
      type: 'object',
    },
  },
  properties: {
    amount: { maximum: 100000, minimum: 50, title: 'Amount', type: 'integer' },
    currency: { default: 'EUR', enum: ['EUR', 'USD', 'JPY'], title: 'Currency', type: 'string' },
    flexible: { default: false, title: 'Flexible', type: 'boolean' },
    travellers: { items: { $ref: '#/$defs/Traveller' }, title: 'Travellers', type: 'array' },
    notes: { title: 'Notes', type: 'object', additionalProperties: true },
  },
  required: ['amount'],
  title: 'Budget',
  type: 'object',
};

const kinds = (form: FormField): unknown =>
  form.kind === 'object'
    ? Object.fromEntries(form.fields.map(f => [f.name, kinds(f)]))
    : form.kind === 'array'
      ? [kinds(form.item)]
      : form.kind;

describe('inputForm', () => {
  it('reads pydantic schemas: refs, enums, Optional, nested objects and arrays', () => {
    const form = inputForm(BUDGET);
    expect(kinds(form)).toEqual({
      amount: 'integer',
      currency: 'enum',
      flexible: 'boolean',
      travellers: [{ name: 'string', age: 'integer' }],
      notes: 'json',
    });
    expect(form.kind === 'object' && form.fields[0]).toMatchObject({ label: 'Amount', required: true, minimum: 50 });
    const travellers = form.kind === 'object' ? form.fields[3] : undefined;
    const age = travellers?.kind === 'array' && travellers.item.kind === 'object' ? travellers.item.fields[1] : undefined;
    expect(age).toMatchObject({ kind: 'integer', nullable: true, required: false, maximum: 130 });
  });

  it('is a JSON box for no schema, a bare string for {type: string}', () => {
    expect(inputForm(null).kind).toBe('json');
    expect(inputForm({ type: 'string' })).toMatchObject({ kind: 'string', label: 'Answer' });
    expect(inputForm({ oneOf: [{ type: 'string' }, { type: 'integer' }] }).kind).toBe('json');
  });

  it('starts from the defaults', () => {
    expect(initialValue(inputForm(BUDGET))).toEqual({ currency: 'EUR', flexible: false, travellers: [] });
  });
});

describe('checkInput', () => {
  const form = inputForm(BUDGET);
  it('accepts a valid answer and names what is wrong by path', () => {
    expect(checkInput(form, { amount: 600, currency: 'EUR', travellers: [{ name: 'Ana' }] })).toEqual([]);
    expect(checkInput(form, { currency: 'EUR' })).toEqual([['$.amount', 'is required']]);
    expect(checkInput(form, { amount: 10.5 })).toEqual([['$.amount', 'must be a whole number']]);
    expect(checkInput(form, { amount: 10 })).toEqual([['$.amount', 'must be at least 50']]);
    expect(checkInput(form, { amount: 60, currency: 'GBP' })).toEqual([['$.currency', 'must be one of the choices']]);
    expect(checkInput(form, { amount: 60, travellers: [{ name: '' }] })).toEqual([['$.travellers[0].name', 'is required']]);
  });
});

describe('answers', () => {
  const sent: unknown[] = [];
  const chat = { addToolOutput: async (output: unknown) => void sent.push(output) };

  it('answer through addToolOutput; a credential as {apiKey} or {token}', async () => {
    const input = { type: 'tool-adk_request_input', toolCallId: 'ask', state: 'input-available', input: {} };
    const key = {
      type: 'tool-adk_request_credential',
      toolCallId: 'key',
      state: 'input-available',
      input: { scheme: 'apiKey', message: 'Your key', functionCallId: 'c', in: 'header', name: 'X-Key' },
    };
    const bearer = { ...key, toolCallId: 'tok', input: { ...key.input, scheme: 'bearer' } };
    expect(isInputRequest(input) && isCredentialRequest(key)).toBe(true);
    await answerInput(chat, input, { amount: 60, note: undefined });
    await answerCredential(chat, key, 'k-1');
    await answerCredential(chat, bearer, 't-1');
    expect(sent).toEqual([
      { tool: 'adk_request_input', toolCallId: 'ask', output: { amount: 60 } },
      { tool: 'adk_request_credential', toolCallId: 'key', output: { apiKey: 'k-1' } },
      { tool: 'adk_request_credential', toolCallId: 'tok', output: { token: 't-1' } },
    ]);
    await expect(
      answerCredential(chat, { ...key, input: { ...key.input, scheme: 'oauth2' } }, 'x'),
    ).rejects.toThrow(/signing in/);
  });

  it('reads a refusal and reopens the call', () => {
    const error = new Error('{"error":{"code":"invalid_input","message":"Invalid answer at $.amount: must be integer."}}');
    expect(refusedAnswer(error)).toEqual({ code: 'invalid_input', message: 'Invalid answer at $.amount: must be integer.' });
    expect(refusedAnswer(new Error('Failed to fetch'))).toBeUndefined();
    const chat2 = {
      messages: [{ parts: [{ type: 'tool-adk_request_input', toolCallId: 'ask', state: 'output-available', output: { amount: 'x' } }] }],
    };
    reopenToolCall(chat2, 'ask');
    expect(chat2.messages[0].parts[0]).toEqual({ type: 'tool-adk_request_input', toolCallId: 'ask', state: 'input-available' });
  });
});

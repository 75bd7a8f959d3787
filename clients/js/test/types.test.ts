/**
 * The data-part and metadata types: what `useChat<AdkUIMessage>` / `onData` see (checked
 * by `npm run typecheck`), and `adkToolCallMetadata`.
 */
import type { ChatOnDataCallback, DataUIPart } from 'ai';
import { describe, expect, expectTypeOf, it } from 'vitest';

import {
  adkToolCallMetadata,
  type AdkDataTypes,
  type AdkUIMessage,
  type GroundingData,
  type PcmData,
  type QueuedData,
  type TranscriptionData,
} from '../src/types';

describe('types', () => {
  it('onData narrows data-pcm, data-transcription and data-queued by their type', () => {
    const seen: string[] = [];
    const onData: ChatOnDataCallback<AdkUIMessage> = part => {
      if (part.type === 'data-pcm') {
        expectTypeOf(part.data).toEqualTypeOf<PcmData>();
        seen.push(`${part.data.sampleRate}`);
      } else if (part.type === 'data-transcription') {
        expectTypeOf(part.data).toEqualTypeOf<TranscriptionData>();
        seen.push(part.data.text);
      } else if (part.type === 'data-queued') {
        expectTypeOf(part.data).toEqualTypeOf<QueuedData>();
        seen.push(part.data.reason);
      }
    };
    onData({ type: 'data-pcm', data: { content: '', sampleRate: 24000, channels: 1, bitDepth: 16 } });
    onData({ type: 'data-transcription', data: { role: 'user', text: 'hi', finished: true } });
    onData({ type: 'data-queued', data: { reason: 'chat-busy' } });
    expect(seen).toEqual(['24000', 'hi', 'chat-busy']);
    expectTypeOf<DataUIPart<AdkDataTypes>['type']>().toEqualTypeOf<
      'data-pcm' | 'data-transcription' | 'data-grounding' | 'data-queued'
    >();
    // @ts-expect-error: not a data part the server sends
    onData({ type: 'data-other', data: {} });
  });

  it('a data-grounding part of a message is typed', () => {
    const message: AdkUIMessage = {
      id: 'm',
      role: 'assistant',
      parts: [
        { type: 'source-url', sourceId: 'm-s1', url: 'https://pt.test' },
        {
          type: 'data-grounding',
          id: 'm-g1',
          data: {
            searchQueries: ['capital of portugal'],
            searchEntryPoint: '<div></div>',
            supports: [{ text: 'Lisbon.', startIndex: 0, endIndex: 7, sourceIds: ['m-s1'] }],
          },
        },
      ],
    };
    const [grounding] = message.parts.filter(p => p.type === 'data-grounding');
    if (grounding?.type === 'data-grounding') {
      expectTypeOf(grounding.data).toEqualTypeOf<GroundingData>();
      expect(grounding.data.supports?.[0]?.sourceIds).toEqual(['m-s1']);
    } else {
      expect.unreachable();
    }
  });

  it('adkToolCallMetadata reads the adk provider metadata of a tool part', () => {
    const part = { callProviderMetadata: { adk: { approvalId: 'a1', hint: 'Sure?', payload: { n: 1 } } } };
    expect(adkToolCallMetadata(part)).toEqual({ approvalId: 'a1', hint: 'Sure?', payload: { n: 1 } });
    expect(adkToolCallMetadata({})).toBeUndefined();
    expect(adkToolCallMetadata({ callProviderMetadata: { other: {} } })).toBeUndefined();
    expect(adkToolCallMetadata({ callProviderMetadata: { adk: { hint: 'no id' } } })).toBeUndefined();
  });
});

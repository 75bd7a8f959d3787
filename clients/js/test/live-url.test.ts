/** liveUrl: the live endpoint's WebSocket URL from the chat endpoint's HTTP URL or path. */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { liveUrl } from '../src/live-url';

describe('liveUrl', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it.each([
    ['http://127.0.0.1:8000/api/chat', {}, 'ws://127.0.0.1:8000/api/chat'],
    ['https://example.com/api/chat', {}, 'wss://example.com/api/chat'],
    ['wss://example.com/api/chat', {}, 'wss://example.com/api/chat'],
    ['ws://h/api/chat?token=t', { chatId: 'c 1' }, 'ws://h/api/chat?token=t&chatId=c+1'],
    ['https://h/api/chat', { chatId: 'chat-1', modality: 'audio' }, 'wss://h/api/chat?chatId=chat-1&modality=audio'],
    ['/api/chat', { base: 'https://h/app/' }, 'wss://h/api/chat'],
    ['chat', { base: 'http://h/app/' }, 'ws://h/app/chat'],
  ] as const)('%s %o → %s', (api, options, expected) => {
    expect(liveUrl(api, options)).toBe(expected);
  });

  it('resolves a path against the page', () => {
    vi.stubGlobal('location', { href: 'https://chat.example.com/some/page?mode=voice' });
    expect(liveUrl('/api/chat', { chatId: 'x' })).toBe('wss://chat.example.com/api/chat?chatId=x');
  });

  it('says why it cannot make one', () => {
    expect(() => liveUrl('/api/chat')).toThrow(/give an absolute URL or options.base/);
    expect(() => liveUrl('ftp://h/api/chat')).toThrow('adk-asgi: ftp: is not an HTTP or WebSocket URL.');
  });
});

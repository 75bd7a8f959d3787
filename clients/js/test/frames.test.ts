/**
 * The frame capture helper in Node: its sizing, base64 and timing, with stand-ins for the
 * DOM it uses (a `<video>` element, an `OffscreenCanvas`, a `MediaStream` and
 * `navigator.mediaDevices`) on Vitest's fake timers. A real camera (Chromium's fake
 * device) through the chat page to the Gemini emulator: tests/gemini/test_gemini_browser.py.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { FrameCapture, fitWithin, toBase64 } from '../src/frames';

class FakeTrack {
  stopped = false;
  private listeners: Array<() => void> = [];
  addEventListener(_kind: 'ended', listener: () => void) {
    this.listeners.push(listener);
  }
  stop() {
    this.stopped = true;
  }
  end() {
    for (const listener of this.listeners) listener();
  }
}

class FakeStream {
  track = new FakeTrack();
  getVideoTracks() {
    return [this.track];
  }
  getTracks() {
    return [this.track];
  }
}

class FakeVideo {
  muted = false;
  playsInline = false;
  srcObject: unknown = null;
  videoWidth = 1280;
  videoHeight = 720;
  async play() {}
}

interface Drawn {
  width: number;
  height: number;
  args: unknown[];
}

const canvas = {
  drawn: [] as Drawn[],
  encodes: [] as Array<{ type?: string; quality?: number }>,
  /** How long an encode takes (ms of fake time). */
  delay: 0,
};

class FakeOffscreenCanvas {
  constructor(
    public width: number,
    public height: number,
  ) {}
  getContext() {
    return { drawImage: (...args: unknown[]) => canvas.drawn.push({ width: this.width, height: this.height, args }) };
  }
  async convertToBlob(options: { type?: string; quality?: number }) {
    canvas.encodes.push(options);
    if (canvas.delay > 0) await new Promise(resolve => setTimeout(resolve, canvas.delay));
    return new Blob([`frame ${canvas.encodes.length} ${this.width}x${this.height}`]);
  }
}

let video: FakeVideo;

beforeEach(() => {
  vi.useFakeTimers();
  canvas.drawn = [];
  canvas.encodes = [];
  canvas.delay = 0;
  video = new FakeVideo();
  vi.stubGlobal('document', { createElement: (tag: string) => (tag === 'video' ? video : null) });
  vi.stubGlobal('OffscreenCanvas', FakeOffscreenCanvas);
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

const decode = (data: string) => Buffer.from(data, 'base64').toString();

describe('fitWithin', () => {
  it('scales the longest side down to the limit, keeping the aspect', () => {
    expect(fitWithin(1280, 720, 768)).toEqual({ width: 768, height: 432 });
    expect(fitWithin(720, 1280, 768)).toEqual({ width: 432, height: 768 });
    expect(fitWithin(1920, 1920, 768)).toEqual({ width: 768, height: 768 });
  });

  it('never scales up, and never to nothing', () => {
    expect(fitWithin(640, 480, 768)).toEqual({ width: 640, height: 480 });
    expect(fitWithin(4000, 1, 768)).toEqual({ width: 768, height: 1 });
  });
});

describe('toBase64', () => {
  it('encodes any bytes, also more than one slice of them', () => {
    const bytes = Uint8Array.from({ length: 0x8000 * 2 + 5 }, (_, i) => (i * 31) % 256);
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(toBase64(new Uint8Array())).toBe('');
  });
});

describe('FrameCapture', () => {
  it('sends a frame at once, then one a second: JPEG, scaled to fit 768', async () => {
    const stream = new FakeStream();
    const capture = new FrameCapture(stream as unknown as MediaStream);
    const frames: Array<{ mimeType: string; data: string; width: number; height: number }> = [];
    await capture.start(frame => frames.push(frame));
    expect(frames).toHaveLength(1);
    expect(video.srcObject).toBe(stream);
    expect(video.muted && video.playsInline).toBe(true);
    await vi.advanceTimersByTimeAsync(999);
    expect(frames).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2001);
    expect(frames).toHaveLength(4);
    expect(frames.map(f => decode(f.data))).toEqual([1, 2, 3, 4].map(n => `frame ${n} 768x432`));
    expect(frames[0]).toMatchObject({ mimeType: 'image/jpeg', width: 768, height: 432 });
    expect(canvas.encodes[0]).toEqual({ type: 'image/jpeg', quality: 0.8 });
    expect(canvas.drawn[0].args).toEqual([video, 0, 0, 768, 432]);
    expect(capture.frames).toBe(4);
    expect(capture.running).toBe(true);
    capture.stop();
  });

  it('takes its rate, size and type from the options, and follows the video size', async () => {
    const capture = new FrameCapture(new FakeStream() as unknown as MediaStream, {
      framesPerSecond: 0.5,
      maxSize: 320,
      mimeType: 'image/png',
    });
    const frames: Array<{ mimeType: string; width: number; height: number }> = [];
    await capture.start(frame => frames.push(frame));
    await vi.advanceTimersByTimeAsync(1999);
    expect(frames).toHaveLength(1);
    video.videoWidth = 480; // the user rotated the phone, or resized the shared window
    video.videoHeight = 640;
    await vi.advanceTimersByTimeAsync(1);
    expect(frames.map(f => [f.mimeType, f.width, f.height])).toEqual([
      ['image/png', 320, 180],
      ['image/png', 240, 320],
    ]);
    expect(canvas.encodes[1]).toEqual({ type: 'image/png', quality: 0.8 });
    capture.stop();
  });

  it('skips ticks while a frame is still being encoded (no overlap, no backlog)', async () => {
    canvas.delay = 2500;
    const capture = new FrameCapture(new FakeStream() as unknown as MediaStream);
    const frames: unknown[] = [];
    const started = capture.start(frame => frames.push(frame));
    await vi.advanceTimersByTimeAsync(2500);
    await started;
    expect(frames).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(3000);
    // ticks at 1 s and 2 s were skipped; 3 s started the second encode, done at 5.5 s
    expect(canvas.encodes).toHaveLength(2);
    expect(frames).toHaveLength(2);
    capture.stop();
  });

  it('waits for the video to have a size', async () => {
    video.videoWidth = 0;
    video.videoHeight = 0;
    const capture = new FrameCapture(new FakeStream() as unknown as MediaStream);
    const frames: unknown[] = [];
    await capture.start(frame => frames.push(frame));
    expect(frames).toHaveLength(0);
    video.videoWidth = 640;
    video.videoHeight = 480;
    await vi.advanceTimersByTimeAsync(1000);
    expect(frames).toHaveLength(1);
    capture.stop();
  });

  it('stop() ends the timer and the tracks', async () => {
    const stream = new FakeStream();
    const capture = new FrameCapture(stream as unknown as MediaStream);
    const frames: unknown[] = [];
    await capture.start(frame => frames.push(frame));
    capture.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(frames).toHaveLength(1);
    expect(stream.track.stopped).toBe(true);
    expect(video.srcObject).toBe(null);
    expect(capture.running).toBe(false);
    await expect(capture.start(() => {})).rejects.toThrow('stopped');
  });

  it('a stream that ends by itself (Stop sharing) stops the capture and says so', async () => {
    const stream = new FakeStream();
    const capture = new FrameCapture(stream as unknown as MediaStream);
    const ended = vi.fn();
    capture.onEnded = ended;
    const frames: unknown[] = [];
    await capture.start(frame => frames.push(frame));
    stream.track.end();
    await vi.advanceTimersByTimeAsync(3000);
    expect(ended).toHaveBeenCalledTimes(1);
    expect(frames).toHaveLength(1);
    expect(capture.running).toBe(false);
  });

  it('reports a frame that fails and goes on', async () => {
    const capture = new FrameCapture(new FakeStream() as unknown as MediaStream);
    const errors: unknown[] = [];
    capture.onError = error => errors.push(error);
    const frames: unknown[] = [];
    const original = FakeOffscreenCanvas.prototype.convertToBlob;
    FakeOffscreenCanvas.prototype.convertToBlob = async () => {
      throw new Error('encoder busy');
    };
    await capture.start(frame => frames.push(frame));
    FakeOffscreenCanvas.prototype.convertToBlob = original;
    await vi.advanceTimersByTimeAsync(1000);
    expect(errors.map(e => (e as Error).message)).toEqual(['encoder busy']);
    expect(frames).toHaveLength(1);
    capture.stop();
  });

  it('refuses a rate that is not a positive number', () => {
    for (const framesPerSecond of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new FrameCapture(new FakeStream() as unknown as MediaStream, { framesPerSecond })).toThrow(
        RangeError,
      );
    }
  });

  it('camera() and screen() ask for video only', async () => {
    const getUserMedia = vi.fn(async () => new FakeStream());
    const getDisplayMedia = vi.fn(async () => new FakeStream());
    vi.stubGlobal('navigator', { mediaDevices: { getUserMedia, getDisplayMedia } });
    const camera = await FrameCapture.camera({ video: { facingMode: 'environment' } });
    const screen = await FrameCapture.screen();
    expect(getUserMedia).toHaveBeenCalledWith({ video: { facingMode: 'environment' }, audio: false });
    expect(getDisplayMedia).toHaveBeenCalledWith({ video: true, audio: false });
    expect(camera).toBeInstanceOf(FrameCapture);
    expect(screen.stream).toBeInstanceOf(FakeStream);
  });
});

/**
 * The audio helpers' arithmetic, in Node: the capture worklet's resampling to 16 kHz
 * PCM16 frames (its source run with a stand-in for the AudioWorklet global scope) and
 * the decoding of `data-pcm` chunks. Capture and playback with real devices are
 * covered by the browser tests (tests/browser/test_browser.py, Chromium's fake microphone).
 */
import { describe, expect, it } from 'vitest';

import { CAPTURE_WORKLET, decodePcm16 } from '../src/audio';

interface Posted {
  pcm: ArrayBuffer;
  level: number;
}

/** Load the worklet's source at `rate` Hz; returns its processor and what it posts. */
function loadWorklet(rate: number): { process: (input: Float32Array) => boolean; posted: Posted[] } {
  const posted: Posted[] = [];
  let Processor: (new () => { process(inputs: Float32Array[][]): boolean }) | undefined;
  class AudioWorkletProcessor {
    port = { postMessage: (message: Posted) => posted.push(message) };
  }
  const register = (name: string, cls: typeof Processor) => {
    expect(name).toBe('pcm-capture');
    Processor = cls;
  };
  new Function('AudioWorkletProcessor', 'registerProcessor', 'sampleRate', CAPTURE_WORKLET)(
    AudioWorkletProcessor,
    register,
    rate,
  );
  const processor = new Processor!();
  return { process: input => processor.process([[input]]), posted };
}

function sine(rate: number, hz: number, seconds: number, amplitude: number): Float32Array {
  const samples = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < samples.length; i++) samples[i] = amplitude * Math.sin((2 * Math.PI * hz * i) / rate);
  return samples;
}

describe('the microphone worklet', () => {
  it.each([48_000, 44_100, 16_000])('resamples %i Hz to 40 ms frames of PCM16 at 16 kHz', rate => {
    const { process, posted } = loadWorklet(rate);
    const signal = sine(rate, 440, 1, 0.5);
    for (let at = 0; at < signal.length; at += 128) {
      // render quanta of 128 frames, as the audio thread calls it
      expect(process(signal.subarray(at, at + 128))).toBe(true);
    }
    // one second is 16 000 samples: 25 frames of 640 (the rest waits for the next quantum)
    expect(posted.length).toBe(25);
    const pcm = posted.map(p => new Int16Array(p.pcm));
    expect(pcm.every(frame => frame.length === 640)).toBe(true);
    const all = Int16Array.from(pcm.flatMap(frame => Array.from(frame)));
    // the same 440 Hz tone at 16 kHz: within rounding when the rates divide, else
    // within what taking the nearest earlier input sample costs (< 1 input period)
    const tolerance = Number.isInteger(rate / 16_000) ? 2 : 0.5 * 0x7fff * ((2 * Math.PI * 440) / rate) + 2;
    for (let i = 0; i < all.length; i++) {
      const expected = 0.5 * Math.sin((2 * Math.PI * 440 * i) / 16_000) * 0x7fff;
      expect(Math.abs(all[i] - expected)).toBeLessThan(tolerance);
    }
    expect(posted[0].level).toBeGreaterThan(0.45);
    expect(posted[0].level).toBeLessThanOrEqual(0.5);
  });

  it('clips what is out of range and ignores a missing input', () => {
    const { process, posted } = loadWorklet(16_000);
    expect(process(undefined as unknown as Float32Array)).toBe(true); // no input connected yet
    expect(posted).toEqual([]);
    const loud = new Float32Array(640).fill(2);
    loud.fill(-3, 320);
    process(loud);
    const frame = new Int16Array(posted[0].pcm);
    expect(frame[0]).toBe(0x7fff);
    expect(frame[639]).toBe(-0x8000);
    expect(posted[0].level).toBe(1);
  });
});

describe('decodePcm16', () => {
  it('turns a data-pcm chunk into floats in [-1, 1)', () => {
    const samples = Int16Array.from([0, 0x4000, -0x8000, 0x7fff, -1]);
    const content = Buffer.from(samples.buffer).toString('base64');
    const floats = decodePcm16({ content });
    expect(Array.from(floats)).toEqual([0, 0.5, -1, 0x7fff / 0x8000, -1 / 0x8000]);
  });

  it('drops an odd trailing byte', () => {
    const content = Buffer.from([0x00, 0x40, 0x7f]).toString('base64');
    expect(Array.from(decodePcm16({ content }))).toEqual([0.5]);
  });
});

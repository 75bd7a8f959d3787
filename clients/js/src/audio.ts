/**
 * Live audio for protocol A: the microphone as PCM16 mono 16 kHz frames, and the
 * model's `data-pcm` chunks (PCM16 mono, 24 kHz) played back gap-free.
 */
import type { PcmData } from './types';

/**
 * The AudioWorklet (its source, loaded from a `blob:` URL) that downsamples the input
 * to 16 kHz and posts Int16 frames of 40 ms. Exported for tests, not from the package.
 */
export const CAPTURE_WORKLET = `
class PcmCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.ratio = sampleRate / 16000;
    this.pos = 0;
    this.frame = new Int16Array(640);
    this.fill = 0;
  }
  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    let level = 0;
    for (; this.pos < input.length; this.pos += this.ratio) {
      const s = Math.max(-1, Math.min(1, input[Math.floor(this.pos)]));
      level = Math.max(level, Math.abs(s));
      this.frame[this.fill++] = s < 0 ? s * 0x8000 : s * 0x7fff;
      if (this.fill === this.frame.length) {
        this.port.postMessage({ pcm: this.frame.buffer, level }, [this.frame.buffer]);
        this.frame = new Int16Array(640);
        this.fill = 0;
      }
    }
    this.pos -= input.length;
    return true;
  }
}
registerProcessor('pcm-capture', PcmCapture);
`;

/**
 * The microphone as PCM16 mono 16 kHz frames of 40 ms (what `AdkLiveTransport.sendAudio`
 * takes). Needs a secure context (https or localhost) and, under a Content Security
 * Policy, `blob:` allowed for scripts (the worklet is loaded from one).
 */
export class Microphone {
  private context: AudioContext | null = null;
  private stream: MediaStream | null = null;
  private node: AudioWorkletNode | null = null;

  /** Ask for the microphone and call `onFrame` with 40 ms PCM16 16 kHz frames. */
  async start(onFrame: (pcm: ArrayBuffer, level: number) => void): Promise<void> {
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true },
    });
    const context = new AudioContext();
    this.context = context;
    const url = URL.createObjectURL(new Blob([CAPTURE_WORKLET], { type: 'text/javascript' }));
    try {
      await context.audioWorklet.addModule(url);
    } finally {
      URL.revokeObjectURL(url);
    }
    const source = context.createMediaStreamSource(this.stream);
    const node = new AudioWorkletNode(context, 'pcm-capture');
    node.port.onmessage = event => onFrame(event.data.pcm as ArrayBuffer, event.data.level as number);
    source.connect(node);
    this.node = node;
  }

  async stop(): Promise<void> {
    this.node?.port.close();
    this.node?.disconnect();
    this.node = null;
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.stream = null;
    await this.context?.close();
    this.context = null;
  }
}

/** A `data-pcm` chunk's samples (PCM16 little-endian, base64) as floats in [-1, 1). */
export function decodePcm16(chunk: Pick<PcmData, 'content'>): Float32Array {
  const bytes = Uint8Array.from(atob(chunk.content), c => c.charCodeAt(0));
  const samples = new Int16Array(bytes.buffer, 0, bytes.byteLength >> 1);
  const floats = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) floats[i] = samples[i] / 0x8000;
  return floats;
}

/**
 * Plays `data-pcm` chunks (24 kHz, mono) back to back, as they arrive: call `play`
 * from `useChat`'s `onData`. The first one needs a user gesture before it (browsers'
 * autoplay rule), e.g. the click that started the microphone.
 */
export class PcmPlayer {
  private context: AudioContext | null = null;
  private next = 0;
  muted = false;
  /** Chunks and seconds received so far (for a status display; `onChange` tells). */
  chunks = 0;
  seconds = 0;
  onChange?: () => void;

  play(chunk: PcmData): void {
    const samples = decodePcm16(chunk);
    this.chunks++;
    this.seconds += samples.length / chunk.sampleRate;
    this.onChange?.();
    if (this.muted || samples.length === 0) return;
    const context = (this.context ??= new AudioContext());
    if (context.state === 'suspended') void context.resume();
    const buffer = context.createBuffer(1, samples.length, chunk.sampleRate);
    buffer.getChannelData(0).set(samples);
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(context.destination);
    this.next = Math.max(this.next, context.currentTime + 0.03);
    source.start(this.next);
    this.next += buffer.duration;
  }

  /** Drop what is queued (the user barged in). */
  reset(): void {
    void this.context?.close();
    this.context = null;
    this.next = 0;
  }
}

/**
 * Camera and screen frames for live mode (protocol A): a video stream sampled into JPEG
 * (or PNG) images for `AdkLiveTransport.sendImage`, which the server hands to the model
 * as realtime input. The Live API takes video as image frames at 1 frame per second and
 * recommends 768×768 ("Video formats" in
 * https://firebase.google.com/docs/ai-logic/live-api/limits-and-specs): those are the
 * defaults, and a server refuses frames over its `Limits.images_per_second` (1) or
 * `max_image_bytes` (7 MB).
 */

/** The image types an adk-asgi server takes in an `image_frame`. */
export type ImageMimeType = 'image/jpeg' | 'image/png';

/** One frame, as `AdkLiveTransport.sendImage` takes it. */
export interface ImageFrame {
  mimeType: ImageMimeType;
  /** The encoded image, base64. */
  data: string;
  /** Its size in pixels. */
  width: number;
  height: number;
}

export interface FrameCaptureOptions {
  /** Frames per second (default 1: the Live API's video rate, and the server's limit). */
  framesPerSecond?: number;
  /** The longest side of a frame in pixels (default 768); larger video is scaled down. */
  maxSize?: number;
  /** Default `image/jpeg`. */
  mimeType?: ImageMimeType;
  /** JPEG quality from 0 to 1 (default 0.8). */
  quality?: number;
}

/** What `FrameCapture.camera` and `.screen` take: the capture options and the video constraints. */
export interface FrameSourceOptions extends FrameCaptureOptions {
  /** Passed to `getUserMedia` / `getDisplayMedia` as `video` (default: `true`). */
  video?: MediaTrackConstraints | boolean;
}

/** `width`×`height` scaled down (never up) so that neither side exceeds `max`. */
export function fitWithin(width: number, height: number, max: number): { width: number; height: number } {
  const scale = Math.min(1, max / Math.max(width, height, 1));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** Bytes as base64 (in slices: `String.fromCharCode` takes a bounded argument list). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let at = 0; at < bytes.length; at += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  }
  return btoa(binary);
}

type Surface = {
  width: number;
  height: number;
  getContext(kind: '2d'): { drawImage(source: CanvasImageSource, x: number, y: number, w: number, h: number): void } | null;
};

/**
 * Samples a video `MediaStream` into image frames: `start(onFrame)` sends the first frame
 * at once, then one every `1 / framesPerSecond` seconds (a frame still being encoded makes
 * the next tick wait, never overlap). `stop()` ends the capture and the stream's tracks.
 *
 * ```ts
 * const camera = await FrameCapture.camera();          // or FrameCapture.screen()
 * preview.srcObject = camera.stream;
 * camera.onEnded = () => setSharing(false);            // "Stop sharing" in the browser
 * await camera.start(frame => transport.sendImage(frame));
 * ```
 */
export class FrameCapture {
  readonly stream: MediaStream;
  /** The stream ended by itself (the user stopped sharing the screen, the camera went away). */
  onEnded?: () => void;
  /** A frame could not be taken (the capture goes on). Default: `console.warn`. */
  onError?: (error: unknown) => void;
  /** Frames handed to `onFrame` so far. */
  frames = 0;

  private readonly options: Required<FrameCaptureOptions>;
  private video: HTMLVideoElement | null = null;
  private surface: Surface | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private busy = false;
  private stopped = false;

  /** The camera (`getUserMedia`); needs a secure context and the user's permission. */
  static async camera(options: FrameSourceOptions = {}): Promise<FrameCapture> {
    const stream = await navigator.mediaDevices.getUserMedia({ video: options.video ?? true, audio: false });
    return new FrameCapture(stream, options);
  }

  /** A screen, window or tab the user picks (`getDisplayMedia`); call it from a click. */
  static async screen(options: FrameSourceOptions = {}): Promise<FrameCapture> {
    const stream = await navigator.mediaDevices.getDisplayMedia({ video: options.video ?? true, audio: false });
    return new FrameCapture(stream, options);
  }

  constructor(stream: MediaStream, options: FrameCaptureOptions = {}) {
    const framesPerSecond = options.framesPerSecond ?? 1;
    if (!(framesPerSecond > 0) || !Number.isFinite(framesPerSecond)) {
      throw new RangeError('FrameCapture: framesPerSecond must be a positive number.');
    }
    const maxSize = options.maxSize ?? 768;
    if (!(maxSize >= 1)) throw new RangeError('FrameCapture: maxSize must be at least 1.');
    this.stream = stream;
    this.options = {
      framesPerSecond,
      maxSize,
      mimeType: options.mimeType ?? 'image/jpeg',
      quality: options.quality ?? 0.8,
    };
    for (const track of stream.getVideoTracks()) {
      track.addEventListener('ended', () => {
        if (this.stopped) return;
        this.stop();
        this.onEnded?.();
      });
    }
  }

  get running(): boolean {
    return this.timer != null;
  }

  /** Start sending frames to `onFrame`; resolves once the video plays and the first frame is taken. */
  async start(onFrame: (frame: ImageFrame) => void): Promise<void> {
    if (this.stopped) throw new Error('FrameCapture: stopped; make a new one.');
    if (this.timer != null) return;
    const video = document.createElement('video');
    video.muted = true;
    video.playsInline = true;
    video.srcObject = this.stream;
    this.video = video;
    await video.play();
    if (this.stopped) return;
    this.timer = setInterval(() => void this.tick(onFrame), 1000 / this.options.framesPerSecond);
    await this.tick(onFrame);
  }

  /** Stop sampling and end the stream's tracks (the camera light goes off). */
  stop(): void {
    this.stopped = true;
    if (this.timer != null) clearInterval(this.timer);
    this.timer = null;
    for (const track of this.stream.getTracks()) track.stop();
    if (this.video != null) this.video.srcObject = null;
    this.video = null;
  }

  private async tick(onFrame: (frame: ImageFrame) => void): Promise<void> {
    const video = this.video;
    if (this.busy || video == null || video.videoWidth === 0 || video.videoHeight === 0) return;
    this.busy = true;
    try {
      const { width, height } = fitWithin(video.videoWidth, video.videoHeight, this.options.maxSize);
      const surface = this.surfaceOf(width, height);
      surface.getContext('2d')?.drawImage(video, 0, 0, width, height);
      const blob = await this.encode(surface);
      if (this.stopped) return;
      const data = toBase64(new Uint8Array(await blob.arrayBuffer()));
      if (this.stopped) return;
      this.frames++;
      onFrame({ mimeType: this.options.mimeType, data, width, height });
    } catch (error) {
      (this.onError ?? (e => console.warn('FrameCapture:', e)))(error);
    } finally {
      this.busy = false;
    }
  }

  private surfaceOf(width: number, height: number): Surface {
    let surface = this.surface;
    if (surface == null) {
      surface =
        typeof OffscreenCanvas === 'function'
          ? (new OffscreenCanvas(width, height) as unknown as Surface)
          : (document.createElement('canvas') as unknown as Surface);
      this.surface = surface;
    }
    if (surface.width !== width) surface.width = width;
    if (surface.height !== height) surface.height = height;
    return surface;
  }

  private encode(surface: Surface): Promise<Blob> {
    const { mimeType: type, quality } = this.options;
    if ('convertToBlob' in surface) {
      return (surface as unknown as OffscreenCanvas).convertToBlob({ type, quality });
    }
    return new Promise((resolve, reject) =>
      (surface as unknown as HTMLCanvasElement).toBlob(
        blob => (blob != null ? resolve(blob) : reject(new Error('the frame could not be encoded'))),
        type,
        quality,
      ),
    );
  }
}

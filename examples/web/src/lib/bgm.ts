/**
 * `change_bgm`: background music synthesized with the Web Audio API. Each track is a
 * short looping arpeggio in its own key and tempo, so a track change is audible.
 */

const PENTATONIC = [0, 2, 4, 7, 9, 12, 9, 7, 4, 2];
const ROOTS = [220, 246.94, 261.63, 293.66, 329.63, 349.23, 392, 440];

export interface BgmState {
  track: number | null;
  playing: boolean;
  contextState: AudioContextState | 'none';
}

export class BgmPlayer {
  private context: AudioContext | null = null;
  private master: GainNode | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private listeners = new Set<(state: BgmState) => void>();
  state: BgmState = { track: null, playing: false, contextState: 'none' };

  subscribe(listener: (state: BgmState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Start `track` (1, 2, …), replacing what plays. Resolves once audio runs. */
  async play(track: number): Promise<BgmState> {
    if (!Number.isInteger(track) || track < 1) throw new Error(`There is no track ${track}.`);
    this.stopLoop();
    const context = (this.context ??= new AudioContext());
    if (context.state === 'suspended') await context.resume();
    this.master?.disconnect();
    const master = context.createGain();
    master.gain.value = 0.05;
    master.connect(context.destination);
    this.master = master;
    const root = ROOTS[(track - 1) % ROOTS.length];
    const step = 0.24 - ((track - 1) % 4) * 0.03; // seconds per note
    let index = 0;
    let next = context.currentTime + 0.05;
    const schedule = () => {
      // Keep ~0.5 s of notes queued ahead of the clock.
      while (next < context.currentTime + 0.5) {
        const semitones = PENTATONIC[index % PENTATONIC.length];
        this.note(context, master, root * 2 ** (semitones / 12), next, step * 0.9);
        next += step;
        index++;
      }
    };
    schedule();
    this.timer = setInterval(schedule, 100);
    this.update({ track, playing: true, contextState: context.state });
    return this.state;
  }

  stop(): void {
    this.stopLoop();
    this.master?.disconnect();
    this.master = null;
    this.update({ ...this.state, playing: false });
  }

  private note(context: AudioContext, out: AudioNode, frequency: number, at: number, length: number) {
    const osc = context.createOscillator();
    const gain = context.createGain();
    osc.type = 'triangle';
    osc.frequency.value = frequency;
    gain.gain.setValueAtTime(0, at);
    gain.gain.linearRampToValueAtTime(1, at + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.001, at + length);
    osc.connect(gain).connect(out);
    osc.start(at);
    osc.stop(at + length + 0.05);
  }

  private stopLoop() {
    if (this.timer != null) clearInterval(this.timer);
    this.timer = null;
  }

  private update(state: BgmState) {
    this.state = state;
    for (const listener of this.listeners) listener(state);
  }
}

/**
 * A fake speech synthesiser for tests, beside the real adapter: deterministic tone audio whose
 * length is proportional to the text, and switches to

 * make calls crash, hang or fail the way the real engine can.
 */
import {
  DEFAULT_SYNTHESIS_TIMEOUT_MS,
  SpeechError,
  type SpeechSynthesizer,
  type SynthesizedAudio,
  type SynthesizeOptions,
} from './types.js';

/** How the fake answers: normally, or like a crashed, hung or refusing engine. */
export type FakeMode = 'ok' | 'crash' | 'hang' | 'fail';

/** Options of {@link FakeSynthesizer}. */
export interface FakeSynthesizerOptions {
  /** Initial {@link FakeSynthesizer.mode}; default 'ok'. */
  mode?: FakeMode;
  /** Sample rate of the audio, Hz; default 22050 (like eSpeak NG). */
  sampleRate?: number;
  /** Audio per character of text, ms; default 60 (at least 100 ms per call). */
  msPerChar?: number;
  /** Wait this long before answering, ms (to test concurrency); default 0. */
  delayMs?: number;
}

/** Deterministic 32-bit hash of a string (picks the tone, so different texts differ). */
function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) >>> 0;
  return h;
}

/**
 * The same text and voice always give the same samples: a sine tone between 300 and 555 Hz at
 * about a quarter of full scale, `msPerChar` per character. `calls` counts every call;
 * `requests` records them (text, voice, time limit) in order. Change `mode` at any time.
 */
export class FakeSynthesizer implements SpeechSynthesizer {
  readonly provider = 'fake';
  mode: FakeMode;
  calls = 0;
  readonly requests: Array<{ text: string; voice: string; timeoutMs: number | undefined }> = [];
  closed = false;
  private readonly sampleRate: number;
  private readonly msPerChar: number;
  private readonly delayMs: number;

  /** @param options see {@link FakeSynthesizerOptions} */
  constructor(options: FakeSynthesizerOptions = {}) {
    this.mode = options.mode ?? 'ok';
    this.sampleRate = options.sampleRate ?? 22_050;
    this.msPerChar = options.msPerChar ?? 60;
    this.delayMs = options.delayMs ?? 0;
  }

  /** 'fake-' + the primary language subtag ('hi-IN' → 'fake-hi'). */
  voiceFor(language: string): string {
    return `fake-${language.trim().toLowerCase().split(/[-_]/)[0] || 'en'}`;
  }

  /**
   * Tone audio for `text`, per {@link FakeSynthesizer.mode}: 'ok' resolves; 'crash' rejects with
   * reason 'crashed'; 'fail' with 'failed'; 'hang' never answers and rejects with 'timeout'
   * after `opts.timeoutMs` (default 5000 ms). A closed fake rejects with 'unavailable'.
   */
  async synthesize(text: string, voice: string, opts: SynthesizeOptions = {}): Promise<SynthesizedAudio> {
    this.calls += 1;
    this.requests.push({ text, voice, timeoutMs: opts.timeoutMs });
    if (this.closed) throw new SpeechError('the fake synthesiser is closed', 'unavailable');
    const mode = this.mode;
    if (mode === 'hang') {
      const limit = opts.timeoutMs ?? DEFAULT_SYNTHESIS_TIMEOUT_MS;
      await new Promise((resolve) => setTimeout(resolve, limit));
      throw new SpeechError(`speech synthesis took longer than ${limit} ms`, 'timeout');
    }
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (mode === 'crash') throw new SpeechError('the fake speech engine crashed', 'crashed');
    if (mode === 'fail') throw new SpeechError('the fake speech engine refused the request', 'failed');
    return { samples: this.tone(`${voice}\u0000${text}`, text.length), sampleRate: this.sampleRate };
  }

  /** Marks the fake closed; later calls reject with 'unavailable'. */
  async close(): Promise<void> {
    this.closed = true;
  }

  private tone(seed: string, chars: number): Int16Array {
    const ms = Math.max(100, chars * this.msPerChar);
    const n = Math.round((ms * this.sampleRate) / 1000);
    const freq = 300 + (hash(seed) % 256);
    const out = new Int16Array(n);
    for (let i = 0; i < n; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * freq * i) / this.sampleRate));
    return out;
  }
}

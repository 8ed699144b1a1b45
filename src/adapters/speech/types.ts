/**
 * The speech-synthesis provider interface (docs/architecture.md "Speech and the audio cache":
 * the `SpeechSynthesizer` interface; the embedded engine runs in a child process, cloud voices
 * call their provider over HTTP). The core depends on this interface; the embedded eSpeak NG
 * adapter (./espeak.ts), the cloud voices (./sarvam.ts, ./elevenlabs.ts) and the test fake
 * (./fake.ts) implement it.
 */

/** Mono 16-bit PCM audio as a synthesiser produced it. */
export interface SynthesizedAudio {
  /** Signed 16-bit samples, one channel. */
  samples: Int16Array;
  /** Samples per second, Hz (the eSpeak NG adapter: 48000, resampled from the engine's 22050). */
  sampleRate: number;
}

/** Options of one {@link SpeechSynthesizer.synthesize} call. */
export interface SynthesizeOptions {
  /** Give up after this many ms (default 5000); the call then rejects with reason 'timeout'. */
  timeoutMs?: number;
}

/** A text-to-speech engine. */
export interface SpeechSynthesizer {
  /** Pricing key of the engine (`config/pricing.yaml`): 'espeak-ng', 'sarvam', 'elevenlabs'; the fake: 'fake'. */
  readonly provider: string;
  /**
   * The engine's voice for a BCP-47 language ('en-IN' → 'en', 'hi-IN' → 'hi'). Never throws:
   * a language the engine lacks maps to a best guess that `synthesize` may reject.
   */
  voiceFor(language: string): string;
  /**
   * Speaks `text` (plain text, already normalised by `toSpokenText`) with `voice`.
   * Never hangs forever: rejects with a {@link SpeechError} on a crash ('crashed'), a hang
   * ('timeout'), a missing engine ('unavailable') or a refused voice or text ('failed').
   */
  synthesize(text: string, voice: string, opts?: SynthesizeOptions): Promise<SynthesizedAudio>;
  /** Stops the engine; pending calls reject with 'unavailable'. Idempotent. */
  close(): Promise<void>;
}

/** Why a synthesis failed. */
export type SpeechErrorReason = 'timeout' | 'crashed' | 'unavailable' | 'failed';

/**
 * A synthesis failure. The caller decides what to do: a turn is answered without audio.
 * Messages never contain the text being spoken (it may hold personal data).
 */
export class SpeechError extends Error {
  override readonly name = 'SpeechError';

  /**
   * @param message human text, without the spoken text
   * @param reason  'timeout' (took longer than allowed), 'crashed' (engine process died),
   *                'unavailable' (engine not installed or closed), 'failed' (engine refused)
   * @param detail  a finer cause for traces, one word (a cloud voice: `http_429`, `bad_audio`,
   *                `unreachable`, `not_configured`); never text, keys or provider messages
   */
  constructor(
    message: string,
    readonly reason: SpeechErrorReason,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** Default time limit of one synthesis, ms. */
export const DEFAULT_SYNTHESIS_TIMEOUT_MS = 5000;

/**
 * What the session and agent services need from speech (DESIGN.md §2–3): content-addressed
 * clips, synthesised on a cache miss. The daemon passes the real speech service
 * (`src/speech/synthesis.ts`); tests may pass a fake. Errors from synthesis reject `ensure`;
 * the caller answers without audio.
 */

/** One clip in the audio cache. */
export interface EnsuredClip {
  /** SHA-256 (hex) naming the 48 kHz WAV in the cache. */
  sha: string;
  /** True when the clip was already cached (no synthesis, no cost). */
  cacheHit: boolean;
  /**
   * Characters (Unicode code points) synthesised and billable for this call: the text's length
   * on a miss this call synthesised; 0 on a hit and for a call that joined another call's
   * synthesis of the same clip.
   */
  chars: number;
}

/** Speech as the services use it. */
export interface SpeechPort {
  /** Pricing key of the synthesiser (`espeak-ng`). */
  readonly provider: string;
  /** The synthesiser's voice for a BCP-47 language. */
  voiceFor(language: string): string;
  /** The cache key of `spokenText` in `voice` (whether or not it is cached). */
  keyFor(spokenText: string, voice: string): string;
  /** True when clip `sha` is in the cache. */
  has(sha: string): boolean;
  /** The clip for `spokenText`, synthesising it on a miss. @throws SpeechError-like errors on failure. */
  ensure(spokenText: string, voice: string): Promise<EnsuredClip>;
  /** Synthesises every text not yet cached; resolves with counts (never rejects). */
  prepare(spokenTexts: string[], voice: string, onProgress?: (done: number, total: number) => void): Promise<{ ready: number; failed: number }>;
  /** A cached clip made of `shas` played in order; returns its sha. */
  combine(shas: string[]): Promise<string>;
  /** The sha of the clip {@link SpeechPort.combine} gives for `shas` when it is cached already, else null. */
  combinedIfCached(shas: readonly string[]): string | null;
  /** The WAV file of cached clip `sha`, or null when `sha` is malformed or not cached. */
  fileOf(sha: string): string | null;
}

/** Speech switched off (`speech: off`): every clip is text only, at no cost. */
export class NoSpeech implements SpeechPort {
  readonly provider = 'none';
  voiceFor(): string { return 'none'; }
  keyFor(spokenText: string, voice: string): string { return `${voice}:${spokenText.length}`; }
  has(): boolean { return false; }
  ensure(): Promise<EnsuredClip> { return Promise.reject(new Error('speech synthesis is off')); }
  prepare(spokenTexts: string[]): Promise<{ ready: number; failed: number }> { return Promise.resolve({ ready: 0, failed: spokenTexts.length }); }
  async combine(): Promise<string> { throw new Error('speech synthesis is off'); }
  combinedIfCached(): string | null { return null; }
  fileOf(): string | null { return null; }
}

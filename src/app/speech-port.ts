/**
 * What the session and agent services need from speech (docs/architecture.md "Speech and the audio
 * cache"): content-addressed
 * clips, synthesised on a cache miss. A clip has a *key* (SHA-256 of engine, voice and text:
 * internal, since anyone can compute it from a guessed text) and a public *name* (a keyed MAC
 * of the key under the install's secret), which is all an audio URL ever shows. The daemon passes the real speech service
 * (`src/adapters/speech/synthesis.ts`); tests may pass a fake. Errors from synthesis reject `ensure`;
 * the caller answers without audio.
 */

/** One clip in the audio cache. */
export interface EnsuredClip {
  /** The clip's cache key (SHA-256 hex of engine, voice and text); never shown to clients. */
  key: string;
  /** True when the clip was already cached (no synthesis, no cost). */
  cacheHit: boolean;
  /**
   * Characters (Unicode code points) synthesised and billable for this call: the text's length
   * on a miss this call synthesised; 0 on a hit and for a call that joined another call's
   * synthesis of the same clip.
   */
  chars: number;
  /**
   * Pricing key of the engine that spoke the clip, when the voice was a cloud voice (its
   * provider, or the embedded engine's after a fallback); absent: the port's {@link SpeechPort.provider}.
   */
  provider?: string;
  /**
   * Set when a cloud voice failed and the embedded engine spoke the clip instead:
   * `fallback:<provider>:<why>` (`timeout`, `http_429`, `bad_audio`, `not_configured`, …), what
   * the turn's trace shows. The clip is cached under the embedded voice, not the cloud one.
   */
  fallback?: string;
}

/** Speech as the services use it. */
export interface SpeechPort {
  /** Pricing key of the embedded synthesiser (`espeak-ng`); a cloud voice's clips name theirs ({@link EnsuredClip.provider}). */
  readonly provider: string;
  /**
   * The cloud providers it speaks with (`sarvam`, `elevenlabs`: their key is set); a cloud voice
   * of another provider is spoken by the embedded engine. Absent: not known.
   */
  readonly cloudProviders?: readonly string[];
  /** The synthesiser's voice for a BCP-47 language. */
  voiceFor(language: string): string;
  /** The cache key of `spokenText` in `voice` (whether or not it is cached); internal. */
  keyFor(spokenText: string, voice: string): string;
  /** The public name of clip `key`, as audio URLs carry it (`/v1/audio/{name}.wav`). */
  nameOf(key: string): string;
  /**
   * True when clip `key` is in the cache and may be used; a use of a dynamic clip (it becomes
   * the most recently used, so the cap evicts it last).
   */
  has(key: string): boolean;
  /**
   * The clip for `spokenText`, synthesising it on a miss (stored as a dynamic clip, bounded by
   * the cache's cap). @throws SpeechError-like errors on failure.
   */
  ensure(spokenText: string, voice: string): Promise<EnsuredClip>;
  /**
   * Synthesises every text not yet cached; resolves with counts (never rejects). Once
   * `options.signal` aborts, no further text is started; the call resolves when the texts
   * already started are done (or failed).
   */
  prepare(spokenTexts: string[], voice: string, options?: PrepareOptions): Promise<PrepareResult>;
  /** A cached clip made of clips `keys` played in order; returns its key. */
  combine(keys: string[]): Promise<string>;
  /** The key of the clip {@link SpeechPort.combine} gives for `keys` when it is cached already, else null. */
  combinedIfCached(keys: readonly string[]): string | null;
  /** The WAV file of the cached clip whose public name is `name`, or null when there is none. */
  fileOf(name: string): string | null;
  /**
   * Pins clips `keys` for `owner` (an open session): the cache never evicts
   * them until {@link SpeechPort.unpin}`(owner)`.
   */
  pin(owner: string, keys: readonly string[]): void;
  /** Drops every pin of `owner` (its session ended, or left memory). */
  unpin(owner: string): void;
}

/** What {@link SpeechPort.prepare} did. */
export interface PrepareResult {
  /** Distinct texts cached now. */
  ready: number;
  /** Distinct texts that failed (a cloud voice's text the embedded engine spoke instead among them). */
  failed: number;
  /** The first cloud-voice failure's mark, as {@link EnsuredClip.fallback} (`fallback:sarvam:http_400`); absent when none. */
  fallback?: string;
}

/** Options of {@link SpeechPort.prepare}. */
export interface PrepareOptions {
  /** Called after each distinct text with (done, total). */
  onProgress?: (done: number, total: number) => void;
  /** Stops starting new texts once aborted (daemon shutdown). */
  signal?: AbortSignal;
  /**
   * Store new clips as dynamic (bounded by the cache's cap) rather than static: texts rendered
   * for one session, such as a prompt that says the customer's name.
   */
  dynamic?: boolean;
}

/** Speech switched off (`speech: off`): every clip is text only, at no cost. */
export class NoSpeech implements SpeechPort {
  readonly provider = 'none';
  voiceFor(): string {
    return 'none';
  }
  keyFor(spokenText: string, voice: string): string {
    return `${voice}:${spokenText.length}`;
  }
  nameOf(key: string): string {
    return key;
  }
  has(): boolean {
    return false;
  }
  ensure(): Promise<EnsuredClip> {
    return Promise.reject(new Error('speech synthesis is off'));
  }
  prepare(spokenTexts: string[]): Promise<{ ready: number; failed: number }> {
    return Promise.resolve({ ready: 0, failed: spokenTexts.length });
  }
  async combine(): Promise<string> {
    throw new Error('speech synthesis is off');
  }
  combinedIfCached(): string | null {
    return null;
  }
  fileOf(): string | null {
    return null;
  }
  pin(): void {}
  unpin(): void {}
}

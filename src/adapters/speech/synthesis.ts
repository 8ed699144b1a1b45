/**
 * The speech service (docs/architecture.md "Speech and the audio cache": pre-synthesis of every static text, cache hits free and
 * instant, live synthesis only on a miss): a {@link SpeechSynthesizer} in front of an
 * {@link AudioCache}. It is what the session and agent services use as their speech port.
 *
 * Cloud voices: a voice id naming a provider (`sarvam/bulbul:v2/anushka/hi-IN`, see
 * src/domain/voice.ts) is spoken by that provider's synthesiser, under a cache key of its own.
 * When the provider fails (time limit, an error answer, bad audio, no key configured), that clip
 * is spoken by the embedded engine instead — cached under the embedded voice's key, never the
 * cloud voice's, so a later turn asks the provider again — and the clip says so (`fallback`).
 */
import { AudioCache, type ClipClass } from './cache.js';
import { parseCloudVoiceId } from '../../domain/voice.js';
import { DEFAULT_SYNTHESIS_TIMEOUT_MS, SpeechError, type SpeechSynthesizer } from './types.js';
import { toWav48k } from '../../media/wav.js';
import type { EnsuredClip, PrepareOptions, PrepareResult, SpeechPort } from '../../app/speech-port.js';

/** One clip in the cache, as {@link SpeechService.ensure} reports it (the speech port's type). */
export type { EnsuredClip };

/** Options of {@link SpeechService}. */
export interface SpeechServiceOptions {
  /** Time limit of one live synthesis ({@link SpeechService.ensure}), ms; default 5000. */
  timeoutMs?: number;
  /**
   * Time limit of one background synthesis ({@link SpeechService.prepare}), ms; default 20000
   * (long static texts such as FAQ answers, on a busy machine).
   */
  prepareTimeoutMs?: number;
  /** Syntheses {@link SpeechService.prepare} runs at once; default 2. */
  concurrency?: number;
  /**
   * Cloud voices configured, by provider (`sarvam`, `elevenlabs`): each speaks the voice ids
   * naming it. A voice id naming a provider not here falls back to the embedded engine.
   */
  cloud?: readonly SpeechSynthesizer[];
  /**
   * Told when a cloud voice failed and the embedded engine spoke a clip instead: the provider,
   * why (`not_configured`, `http_401`, `unreachable`, …; never a key or a text), and how many
   * such failures were not told since the last notice. At most once per provider and reason per
   * `fallbackNoticeMs`, so a dead provider cannot flood the log.
   */
  onFallback?: (notice: FallbackNotice) => void;
  /** Least time between two {@link SpeechServiceOptions.onFallback} notices of one provider and reason, ms; default 60000. */
  fallbackNoticeMs?: number;
}

/** One notice of {@link SpeechServiceOptions.onFallback}. */
export interface FallbackNotice {
  /** The cloud provider that failed (`sarvam`, `elevenlabs`). */
  provider: string;
  /** Why: the clip's fallback reason (`not_configured`, `http_<status>`, `unreachable`, `timeout`, `bad_audio`, …). */
  reason: string;
  /** Failures of this provider and reason since the previous notice that were not told (0 on the first). */
  suppressed: number;
}

/** As `Error`s go in: a {@link SpeechError} as is, anything else as reason 'failed'. */
function asSpeechError(err: unknown): SpeechError {
  if (err instanceof SpeechError) return err;
  return new SpeechError(`speech synthesis failed: ${(err as Error)?.message ?? String(err)}`, 'failed');
}

/** Synthesis through a content-addressed cache, with concurrent identical requests merged. */
export class SpeechService implements SpeechPort {
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly timeoutMs: number;
  private readonly prepareTimeoutMs: number;
  private readonly concurrency: number;
  private readonly cloud: ReadonlyMap<string, SpeechSynthesizer>;
  private readonly onFallback: ((notice: FallbackNotice) => void) | undefined;
  private readonly fallbackNoticeMs: number;
  /** Per `provider:reason`: when it was last told (ms since the epoch) and failures since then not told. */
  private readonly fallbackNotices = new Map<string, { at: number; suppressed: number }>();

  /**
   * @param synthesizer the embedded engine (eSpeak NG in a child process, or a fake)
   * @param cache       where clips are kept
   * @param options     time limit and pre-synthesis concurrency
   */
  constructor(
    readonly synthesizer: SpeechSynthesizer,
    readonly cache: AudioCache,
    options: SpeechServiceOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_SYNTHESIS_TIMEOUT_MS;
    this.prepareTimeoutMs = options.prepareTimeoutMs ?? 20_000;
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 2));
    this.cloud = new Map((options.cloud ?? []).map((s) => [s.provider, s]));
    this.onFallback = options.onFallback;
    this.fallbackNoticeMs = options.fallbackNoticeMs ?? 60_000;
  }

  /** Tells {@link SpeechServiceOptions.onFallback} of a failure, unless one of the same provider and reason was told lately. */
  private noticeFallback(provider: string, reason: string): void {
    if (!this.onFallback) return;
    const id = `${provider}:${reason}`;
    const now = Date.now();
    const last = this.fallbackNotices.get(id);
    if (last && now - last.at < this.fallbackNoticeMs) {
      last.suppressed += 1;
      return;
    }
    this.fallbackNotices.set(id, { at: now, suppressed: 0 });
    try {
      this.onFallback({ provider, reason, suppressed: last?.suppressed ?? 0 });
    } catch {
      // a listener's fault is not the clip's
    }
  }

  /** The engine's pricing key ('espeak-ng'). */
  get provider(): string {
    return this.synthesizer.provider;
  }

  /** The cloud providers configured ({@link SpeechServiceOptions.cloud}). */
  get cloudProviders(): readonly string[] {
    return [...this.cloud.keys()];
  }

  /** The engine's voice for a BCP-47 language. */
  voiceFor(language: string): string {
    return this.synthesizer.voiceFor(language);
  }

  /**
   * The cache key of `spokenText` in `voice`, whether or not it is cached (internal): under the
   * provider a cloud voice id names, else the embedded engine.
   */
  keyFor(spokenText: string, voice: string): string {
    return AudioCache.keyFor(parseCloudVoiceId(voice)?.provider ?? this.synthesizer.provider, voice, spokenText);
  }

  /** The public name of clip `key` (see {@link AudioCache.nameOf}). */
  nameOf(key: string): string {
    return this.cache.nameOf(key);
  }

  /** True when clip `key` is cached (a use of a dynamic clip, see {@link AudioCache.has}). */
  has(key: string): boolean {
    return this.cache.has(key);
  }

  /** The WAV file of the cached clip named `name` (a public name, not a key), or null. */
  fileOf(name: string): string | null {
    return this.cache.fileOfName(name);
  }

  /**
   * The clip for `spokenText` (already normalised by `toSpokenText`) in `voice`: from the
   * cache, or synthesised (within the time limit), converted to 48 kHz and stored as a
   * *dynamic* clip (docs/api-decisions.md "Audio URLs": bounded by the cache's cap). Identical concurrent calls
   * share one synthesis. A cloud voice that fails is replaced by the embedded engine for this
   * clip: the result names it (`provider`) and why (`fallback`).
   *
   * @throws SpeechError when synthesis or storing fails ('timeout', 'crashed', 'unavailable',
   *         'failed') — for a cloud voice, when the embedded engine failed too; the caller
   *         answers without audio
   */
  ensure(spokenText: string, voice: string): Promise<EnsuredClip> {
    return this.ensureWithin(spokenText, voice, this.timeoutMs, 'dynamic');
  }

  /**
   * {@link SpeechService.ensure} with a given time limit, ms, storing a new clip as `cls`. A
   * static request for a clip cached as dynamic promotes it (pre-synthesis of a text first
   * heard live, or of a legacy cache's clip).
   */
  private async ensureWithin(spokenText: string, voice: string, timeoutMs: number, cls: ClipClass): Promise<EnsuredClip> {
    const cloud = parseCloudVoiceId(voice);
    if (cloud === null) return this.ensureIn(this.synthesizer, spokenText, voice, timeoutMs, cls);
    const synthesizer = this.cloud.get(cloud.provider);
    let why: string;
    if (synthesizer === undefined) why = 'not_configured';
    else {
      try {
        return { ...(await this.ensureIn(synthesizer, spokenText, voice, timeoutMs, cls)), provider: cloud.provider };
      } catch (err) {
        const e = asSpeechError(err);
        why = e.detail ?? e.reason;
      }
    }
    this.noticeFallback(cloud.provider, why);
    const embedded = this.synthesizer.voiceFor(cloud.language);
    const clip = await this.ensureIn(this.synthesizer, spokenText, embedded, timeoutMs, cls);
    return { ...clip, provider: this.synthesizer.provider, fallback: `fallback:${cloud.provider}:${why}` };
  }

  /** The clip of `spokenText` in `voice` spoken by `synthesizer`: cached, joined, or synthesised. */
  private async ensureIn(
    synthesizer: SpeechSynthesizer,
    spokenText: string,
    voice: string,
    timeoutMs: number,
    cls: ClipClass,
  ): Promise<EnsuredClip> {
    const key = AudioCache.keyFor(synthesizer.provider, voice, spokenText);
    if (this.cache.has(key) && (cls === 'dynamic' || this.cache.promote(key))) return { key, cacheHit: true, chars: 0 };
    const running = this.inFlight.get(key);
    if (running) {
      await running;
      if (cls === 'static') this.cache.promote(key);
      return { key, cacheHit: false, chars: 0 };
    }
    const job = this.synthesizeInto(synthesizer, key, spokenText, voice, timeoutMs, cls);
    this.inFlight.set(key, job);
    try {
      await job;
    } finally {
      this.inFlight.delete(key);
    }
    return { key, cacheHit: false, chars: [...spokenText].length };
  }

  /**
   * Synthesises every text of `spokenTexts` not yet cached, `concurrency` at a time
   * (duplicates once), each within `prepareTimeoutMs`. Never rejects: failures are counted.
   * The clips are static (kept for good; dynamic ones already cached are promoted) unless
   * `options.dynamic` (a session's rendered prompts: bounded by the cache's cap).
   * Once `options.signal` aborts, no further text is started (texts not started count as
   * neither ready nor failed); it resolves when the ones already started have settled.
   *
   * @param options `onProgress` called after each distinct text with (done, total); `signal`
   * @returns how many distinct texts are cached now (`ready`) and how many failed (a cloud
   *          voice's text spoken by the embedded engine instead counts as failed), and the
   *          first such text's fallback mark (`fallback`, as {@link EnsuredClip.fallback})
   */
  async prepare(spokenTexts: readonly string[], voice: string, options: PrepareOptions = {}): Promise<PrepareResult> {
    const { onProgress, signal } = options;
    const cls: ClipClass = options.dynamic ? 'dynamic' : 'static';
    const texts = [...new Set(spokenTexts)];
    let next = 0;
    let ready = 0;
    let failed = 0;
    let fallback: string | undefined;
    const worker = async (): Promise<void> => {
      while (next < texts.length && !signal?.aborted) {
        const text = texts[next++]!;
        try {
          // A cloud voice's text that fell back is not ready in that voice (a turn asks again).
          const clip = await this.ensureWithin(text, voice, this.prepareTimeoutMs, cls);
          if (clip.fallback === undefined) ready += 1;
          else {
            failed += 1;
            fallback ??= clip.fallback;
          }
        } catch {
          failed += 1;
        }
        onProgress?.(ready + failed, texts.length);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, texts.length) }, worker));
    return fallback === undefined ? { ready, failed } : { ready, failed, fallback };
  }

  /**
   * A cached clip that plays clips `keys` in order (150 ms apart); returns its key. See
   * {@link AudioCache.combine}.
   *
   * @throws RangeError / Error as {@link AudioCache.combine}
   */
  combine(keys: string[]): Promise<string> {
    return this.cache.combine(keys);
  }

  /** The key {@link SpeechService.combine} gives for `keys` when that clip is cached already, else null. */
  combinedIfCached(keys: readonly string[]): string | null {
    return this.cache.combinedIfCached(keys);
  }

  /** Closes the engine and the cloud voices. */
  async close(): Promise<void> {
    await Promise.all([this.synthesizer.close(), ...[...this.cloud.values()].map((s) => s.close())]);
  }

  /** Pins clips `keys` for `owner` (an open session; see {@link AudioCache.pin}). */
  pin(owner: string, keys: readonly string[]): void {
    this.cache.pin(owner, keys);
  }

  /** Drops the pins of `owner` (see {@link AudioCache.unpin}). */
  unpin(owner: string): void {
    this.cache.unpin(owner);
  }

  private async synthesizeInto(
    synthesizer: SpeechSynthesizer,
    key: string,
    text: string,
    voice: string,
    timeoutMs: number,
    cls: ClipClass,
  ): Promise<string> {
    try {
      const audio = await synthesizer.synthesize(text, voice, { timeoutMs });
      await this.cache.put(key, toWav48k(audio), cls);
      return key;
    } catch (err) {
      throw asSpeechError(err);
    }
  }
}

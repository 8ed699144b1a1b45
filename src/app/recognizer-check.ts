/**
 * Checks of the configured cloud speech recognisers for `vagent telephony check`: an
 * authenticated handshake with each configured provider, failures explained in plain words.
 *
 * A provider is checked when its key is set or a setting names it. Each check is one
 * authenticated WebSocket handshake that sends no audio (`checkDeepgram`, `checkSarvam` of the
 * adapters). Results are plain data without keys: the adapters never put a key in a message,
 * and this service removes one anyway (defence in depth).
 */
import { performance } from 'node:perf_hooks';
import { redactSecrets } from '../domain/redact.js';
import { describeRecognition, type RecognitionConfig } from '../adapters/recognizers/recognizer-choice.js';
import { checkDeepgram } from '../adapters/recognizers/deepgram-check.js';
import { checkSarvam } from '../adapters/recognizers/sarvam-check.js';

/** The outcome of a provider's check function (the adapters' `DeepgramCheck`/`SarvamCheck`). */
export type ProviderCheck =
  { ok: true; detail: string } | { ok: false; problem: 'unauthenticated' | 'rate_limited' | 'unreachable' | 'error'; message: string };

/** One recogniser's check, as `GET /v1/telephony/check` reports it in `recognizers`. */
export interface RecognizerCheckResult {
  /** `deepgram` or `sarvam`. */
  provider: 'deepgram' | 'sarvam';
  /** The language ranges it hears (`*` the default), from the settings; empty when only its key is set. */
  used_for: string[];
  ok: boolean;
  /** What the provider answered (when ok). */
  detail?: string;
  /** `unauthenticated`, `rate_limited`, `unreachable` or `error` (when not ok). */
  problem?: string;
  /** The problem in plain words (when not ok); never holds a key. */
  message?: string;
  /** How long the check took, ms. */
  ms: number;
}

/** Options of a {@link RecognizerCheckService}. */
export interface RecognizerCheckOptions {
  /** Deadline of each handshake, ms; default 5000. */
  timeoutMs?: number;
  /** The check functions (tests); default the adapters'. */
  checks?: Partial<Record<'deepgram' | 'sarvam', (opts: { apiKey: string; url?: string; timeoutMs?: number }) => Promise<ProviderCheck>>>;
}

/** Checks the daemon's cloud recognisers. */
export class RecognizerCheckService {
  constructor(
    private readonly config: RecognitionConfig | null,
    private readonly options: RecognizerCheckOptions = {},
  ) {}

  /** The providers a check would cover: a key set or named by a setting. */
  get providers(): Array<'deepgram' | 'sarvam'> {
    const c = this.config;
    if (!c) return [];
    const named = new Set<string>([c.recognizer, ...Object.values(c.recognizers ?? {})]);
    return (['deepgram', 'sarvam'] as const).filter((p) => c[p]?.api_key !== undefined || named.has(p));
  }

  /**
   * Runs every provider's check at once. Never throws: a check that throws is reported as `error`.
   * @returns one result per provider of {@link providers}, in that order (empty: none configured)
   */
  async check(): Promise<RecognizerCheckResult[]> {
    const c = this.config;
    if (!c) return [];
    const lines = describeRecognition(c, { available: false });
    const timeoutMs = this.options.timeoutMs ?? 5000;
    return Promise.all(
      this.providers.map(async (provider): Promise<RecognizerCheckResult> => {
        const block = c[provider] ?? {};
        const key = block.api_key ?? '';
        const usedFor = lines.filter((l) => l.setting === provider).map((l) => l.range);
        const started = performance.now();
        let r: ProviderCheck;
        try {
          const fn = this.options.checks?.[provider] ?? (provider === 'deepgram' ? checkDeepgram : checkSarvam);
          r = await fn({ apiKey: key, ...(block.url ? { url: block.url } : {}), timeoutMs });
        } catch (err) {
          r = { ok: false, problem: 'error', message: `the check failed: ${(err as Error).message}` };
        }
        const ms = Math.round(performance.now() - started);
        return r.ok
          ? { provider, used_for: usedFor, ok: true, detail: redactSecrets(r.detail, [key]), ms }
          : { provider, used_for: usedFor, ok: false, problem: r.problem, message: redactSecrets(r.message, [key]), ms };
      }),
    );
  }
}

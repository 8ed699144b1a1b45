/**
 * The daemon's settings: one zod schema (docs/architecture.md "Settings").
 *
 * Precedence: defaults < config file (YAML/JSON, `--config` or `VAGENT_CONFIG`) <
 * environment (`VAGENT_*`, and LiveKit's own `LIVEKIT_*` names) < command-line flags.
 */
import { z } from 'zod';

/** Environment variables of the cloud recognisers' keys, for the messages that name them. */
export const RECOGNIZER_KEY_ENV = { deepgram: 'DEEPGRAM_API_KEY', sarvam: 'SARVAM_API_KEY' } as const;

const timezone = z.string().refine(
  (tz) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  },
  { message: 'must be an IANA time zone such as Asia/Kolkata' },
);

/** A yes/no setting: true/false, yes/no, on/off or 1/0 (from a file, a boolean too). */
const flag = z.union(
  [
    z.boolean(),
    z
      .string()
      .trim()
      .toLowerCase()
      .refine((v) => ['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'].includes(v), { error: 'must be true or false' })
      .transform((v) => ['true', 'yes', 'on', '1'].includes(v)),
  ],
  { error: 'must be true or false' },
);

/** A `ws://` or `wss://` URL of a speech provider's streaming endpoint. */
const wsUrl = z
  .string()
  .url({ error: 'must be a URL such as wss://api.example.com/v1/listen' })
  .refine((u) => /^wss?:\/\//i.test(u), { error: 'must start with wss:// or ws://' });

/** An `https://` or `http://` base URL of a speech provider's REST API. */
const restUrl = z
  .string()
  .url({ error: 'must be a URL such as https://api.example.com' })
  .refine((u) => /^https?:\/\//i.test(u), { error: 'must start with https:// or http://' });

/** Whether `range` is `*` or a well-formed BCP-47 tag (ECMA-402 `Intl.getCanonicalLocales`). */
function isLanguageRange(range: string): boolean {
  if (range === '*') return true;
  try {
    return Intl.getCanonicalLocales(range).length === 1;
  } catch {
    return false;
  }
}

/** Settings of one vagent daemon. Durations name their unit; money is INR. */
export const SettingsSchema = z
  .object({
    /** Interface to listen on. Keep loopback unless a reverse proxy fronts the daemon. */
    host: z.string().min(1).default('127.0.0.1'),
    /** TCP port; 0 picks a free one (tests). */
    port: z.coerce
      .number({ error: 'must be a whole number from 0 to 65535' })
      .int({ error: 'must be a whole number from 0 to 65535' })
      .min(0, { error: 'must be a whole number from 0 to 65535' })
      .max(65535, { error: 'must be a whole number from 0 to 65535' })
      .default(8787),
    /** Directory holding the database, lock file and master key (created 0700). */
    state_dir: z.string().min(1),
    /** Tenant isolation of ids (docs/api-decisions.md "Auth"). */
    auth_mode: z.enum(['audit', 'enforce'], { error: 'must be audit or enforce' }).default('audit'),
    /** 32-byte key for trunk credentials, base64 or hex. Unset: `<state_dir>/master.key`. */
    master_key: z.string().min(1).optional(),
    /** Daily spend budget per tenant in INR; 0 turns the check off (docs/calls.md "The daily budget"). */
    tenant_daily_budget_inr: z.coerce
      .number({ error: 'must be a number of rupees, 0 for no budget' })
      .min(0, { error: 'must be 0 (no budget) or more' })
      .max(1e9, { error: 'must be at most 1000000000 rupees' })
      .default(0),
    /** Time zone of the budget day boundary. */
    timezone: timezone.default('Asia/Kolkata'),
    /** How long events are kept (`GET /v1/events`, webhooks; docs/events.md), in days. */
    events_retention_days: z.coerce.number().positive().max(3650).default(7),
    /** How long idempotency records are kept, in hours. */
    idempotency_retention_hours: z.coerce
      .number()
      .positive()
      .max(24 * 365)
      .default(24),
    /**
     * How long sessions (with their turns and calls), audit events, telephony events and unused
     * agent revisions are kept, in whole days; 0 (the default) keeps them for ever. A background
     * purge deletes what is older (docs/api-decisions.md "Retention"): never an open session nor a call whose line
     * may still be up. A tenant may have its own (`vagent admin tenant set NAME --retention-days`).
     */
    retention_days: z.coerce
      .number({ error: 'must be a whole number of days, 0 to keep everything' })
      .int({ error: 'must be a whole number of days, 0 to keep everything' })
      .min(0, { error: 'must be 0 (keep everything) or more days' })
      .max(36_500, { error: 'must be at most 36500 days (100 years); 0 keeps everything' })
      .default(0),
    /**
     * Speech recognition on calls (docs/media.md "2. Speech recognition"): `auto` uses the embedded recogniser (Debian's
     * pocketsphinx, English) when it is installed and is off otherwise; `pocketsphinx` requires
     * it; `fake` is the scripted recogniser, whose lines each call brings through the fake's own
     * channel (src/adapters/recognizers/fake-script.ts; tests, benchmarks, `vagent call simulate`
     * without a recogniser); `off` hears
     * nothing (DTMF still works). `/v1/health` and the start-up lines say which is in force.
     */
    recognizer: z
      .enum(['auto', 'pocketsphinx', 'deepgram', 'sarvam', 'fake', 'off'], {
        error: 'must be one of auto, pocketsphinx, deepgram, sarvam, fake, off',
      })
      .default('auto'),
    /**
     * Per-language overrides of `recognizer` (docs/media.md "Cloud speech recognition"): a BCP-47 language range (RFC 4647 basic
     * range: `hi` covers `hi-IN`) → `auto`, `pocketsphinx`, `deepgram`, `sarvam` or `off`, e.g.
     * `{ hi: sarvam, en-IN: deepgram }`. The longest range matching an agent's language wins;
     * none matching: `recognizer`. Env `VAGENT_RECOGNIZERS` as `hi=sarvam,en-IN=deepgram`.
     */
    recognizers: z
      .record(
        z.string().refine(isLanguageRange, { error: 'must be a language range such as hi or en-IN' }),
        z.enum(['auto', 'pocketsphinx', 'deepgram', 'sarvam', 'off'], {
          error: 'must be one of auto, pocketsphinx, deepgram, sarvam, off',
        }),
        { error: (issue) => (issue.code === 'invalid_key' ? 'must be a language range such as hi or en-IN' : undefined) },
      )
      .default({}),
    /**
     * Deepgram streaming speech recognition (https://developers.deepgram.com/reference/speech-to-text/listen-streaming).
     * `api_key` (env `DEEPGRAM_API_KEY`) is a secret: never logged nor shown.
     */
    deepgram: z
      .object({
        api_key: z.string().min(1).optional(),
        /** The listen WebSocket; default `wss://api.deepgram.com/v1/listen` (env `VAGENT_DEEPGRAM_URL`). */
        url: wsUrl.optional(),
        /** Model; default `nova-3`. */
        model: z.string().min(1).max(100).optional(),
      })
      .default({}),
    /**
     * Sarvam AI streaming speech recognition (https://docs.sarvam.ai/api-reference-docs/speech-to-text/transcribe/ws)
     * and its bulbul voices (agents with `voice: {provider: sarvam}`; on whenever the key is set).
     * `api_key` (env `SARVAM_API_KEY`) is a secret: never logged nor shown.
     */
    sarvam: z
      .object({
        api_key: z.string().min(1).optional(),
        /** The streaming WebSocket; default the provider's (env `VAGENT_SARVAM_URL`). */
        url: wsUrl.optional(),
        /** Base URL of the text-to-speech API; default `https://api.sarvam.ai` (env `VAGENT_SARVAM_TTS_URL`). */
        tts_url: restUrl.optional(),
        /** Model; default the adapter's (saaras). */
        model: z.string().min(1).max(100).optional(),
        /** Output mode of saaras, e.g. `codemix` for Hinglish (the adapter's default). */
        mode: z.string().min(1).max(50).optional(),
      })
      .default({}),
    /**
     * The language model (docs/llm.md): an OpenAI-compatible chat-completions endpoint. Without
     * `base_url` there is none, and no agent's `llm` block is used. The API key is read from the
     * environment only (`VAGENT_LLM_API_KEY`; a secret: never logged nor shown), never from the
     * config file; local servers (llama.cpp, vLLM, Ollama) need none.
     */
    llm: z
      .object({
        /** Base URL of the endpoint, before `/chat/completions`, e.g. `http://127.0.0.1:8080/v1` (env `VAGENT_LLM_BASE_URL`). */
        base_url: z
          .string()
          .url({ error: 'must be a URL such as https://api.openai.com/v1 or http://127.0.0.1:8080/v1' })
          .refine((u) => /^https?:\/\//i.test(u), { error: 'must start with https:// or http://' })
          .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), { error: 'must not hold a user or password: set VAGENT_LLM_API_KEY instead' })
          .optional(),
        /** The model an agent's `llm` block uses when it names none (env `VAGENT_LLM_MODEL`). */
        model: z.string().trim().min(1, { error: 'must not be empty' }).max(200, { error: 'must be at most 200 characters' }).optional(),
        /** Longest wait for one model request, retries included, in ms; then the turn falls back to the rules. */
        timeout_ms: z.coerce
          .number({ error: 'must be a whole number of ms from 100 to 120000' })
          .int({ error: 'must be a whole number of ms from 100 to 120000' })
          .min(100, { error: 'must be a whole number of ms from 100 to 120000' })
          .max(120_000, { error: 'must be a whole number of ms from 100 to 120000' })
          .default(5000),
        /** Retries of a 429, 5xx or failed connection before the answer began (never once it streams). */
        max_retries: z.coerce
          .number({ error: 'must be a whole number from 0 to 10' })
          .int({ error: 'must be a whole number from 0 to 10' })
          .min(0, { error: 'must be a whole number from 0 to 10' })
          .max(10, { error: 'must be a whole number from 0 to 10' })
          .default(2),
        /** From env `VAGENT_LLM_API_KEY` only (the loader refuses it in a file). */
        api_key: z.string().min(1).optional(),
      })
      .default({ timeout_ms: 5000, max_retries: 2 }),
    /**
     * ElevenLabs voices (https://elevenlabs.io/docs/api-reference/text-to-speech/convert), for
     * agents with `voice: {provider: elevenlabs}`; on whenever the key is set. `api_key` (env
     * `ELEVENLABS_API_KEY`) is a secret: never logged nor shown.
     */
    elevenlabs: z
      .object({
        api_key: z.string().min(1).optional(),
        /** Base URL of the API; default `https://api.elevenlabs.io` (env `VAGENT_ELEVENLABS_URL`). */
        url: restUrl.optional(),
      })
      .default({}),
    /**
     * Worker threads that carry call audio (off the API's event loop). Unset: one per
     * CPU, at least 2 and at most 4.
     */
    media_workers: z.coerce
      .number({ error: 'must be a whole number from 1 to 64' })
      .int({ error: 'must be a whole number from 1 to 64' })
      .min(1, { error: 'must be a whole number from 1 to 64' })
      .max(64, { error: 'must be a whole number from 1 to 64' })
      .optional(),
    /** Largest request body accepted, in bytes. */
    body_limit_bytes: z.coerce
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    /** pino log level. */
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * Base URL clients use to fetch audio (`audio_url`, `livekit_wav_url`), e.g. the reverse
     * proxy's `https://vagent.example.in`. Unset: the daemon's own `http://host:port`.
     */
    public_url: z.string().url({ error: 'must be an http(s) URL such as https://vagent.example.in' }).optional(),
    /** Speech synthesis: `embedded` (the bundled engine, in a child process) or `off` (text only). */
    speech: z.enum(['embedded', 'off'], { error: 'must be embedded or off' }).default('embedded'),
    /** Longest wait for one synthesis before the turn is answered without audio, in ms. */
    speech_timeout_ms: z.coerce.number().int().min(100).max(60_000).default(5000),
    /**
     * Disk cap of all call recordings together (`recordings/`), MiB; 0 (the default) for none.
     * Beyond it the oldest recordings are removed first (docs/media.md "Recordings").
     */
    recordings_max_mb: z.coerce
      .number({ error: 'must be a whole number of MiB, 0 for no cap' })
      .int({ error: 'must be a whole number of MiB, 0 for no cap' })
      .min(0, { error: 'must be 0 (no cap) or more MiB' })
      .max(16 * 1024 * 1024, { error: 'must be at most 16777216 MiB (16 TiB)' })
      .default(0),
    /**
     * Cap on the audio cache's *dynamic* clips (synthesised live: names and numbers read back, a
     * session's rendered prompts), in MiB; 0 = no cap. Least recently used clips are evicted
     * beyond it, never within `audio_url_keep_hours` of their last use nor while a session using
     * them is open. Static clips (pre-synthesised agent texts) are never evicted and not counted.
     * Unset: 5% of the size of the filesystem holding the state dir, clamped to 256 MiB–16 GiB
     * (docs/api-decisions.md "Audio URLs"; `vagent admin cache stats` shows the cap in force).
     */
    audio_cache_max_mb: z.coerce
      .number({ error: 'must be a whole number of MiB, 0 for no cap' })
      .int({ error: 'must be a whole number of MiB, 0 for no cap' })
      .min(0, { error: 'must be 0 (no cap) or more MiB' })
      .max(16 * 1024 * 1024, { error: 'must be at most 16777216 MiB (16 TiB)' })
      .optional(),
    /**
     * Hours a dynamic clip is kept after its last use whatever the cap: its `audio_url` answers
     * for at least this long; after it, once the cap is reached, the URL may answer 404.
     */
    audio_url_keep_hours: z.coerce
      .number({ error: 'must be a number of hours' })
      .min(0, { error: 'must be from 0 to 8760 hours' })
      .max(24 * 365, { error: 'must be from 0 to 8760 hours' })
      .default(24),
    /** Prices in INR (YAML). Unset: the shipped `config/pricing.yaml`. */
    pricing_file: z.string().min(1).optional(),
    /** Agents loaded into tenant `default` on first start. Unset: the shipped `config/agents/`. */
    agents_dir: z.string().min(1).optional(),
    /**
     * LiveKit server (telephony): `url`, `api_key` and `api_secret` all set, or none (then
     * `dial: true` fails with `telephony_not_configured` and inbound webhooks are refused).
     */
    livekit: z
      .object({
        /** `wss://…` or `https://…` of the LiveKit server (the SDK talks HTTP to it). */
        url: z
          .string()
          .url({ error: 'must be a URL such as wss://livekit.example.in' })
          .refine((u) => /^(wss?|https?):\/\//i.test(u), { error: 'must start with wss://, ws://, https:// or http://' })
          .optional(),
        api_key: z.string().min(1).optional(),
        api_secret: z.string().min(1).optional(),
        /** The name vagent's own participant shows in each call's room. */
        agent_name: z.string().min(1).max(128).default('vagent-media'),
        /** Longest wait for one LiveKit API request, in seconds; a dial without an answer by then has an unknown outcome. */
        request_timeout_s: z.coerce
          .number({ error: 'must be a number of seconds' })
          .min(1, { error: 'must be from 1 to 120 seconds' })
          .max(120, { error: 'must be from 1 to 120 seconds' })
          .default(10),
        /**
         * Dial with `waitUntilAnswered`: `POST /v1/calls` returns once the callee answers, and a
         * busy or declined callee is a `dial_failed` naming the SIP status. Off: it returns as soon
         * as LiveKit starts the call, and such failures arrive later by webhook (`dial_status`
         * becomes `failed`). The request then waits up to the ringing timeout + 2 s.
         */
        wait_until_answered: flag.default(true),
      })
      .default({ agent_name: 'vagent-media', request_timeout_s: 10, wait_until_answered: true })
      .superRefine((lk, ctx) => {
        const set = (['url', 'api_key', 'api_secret'] as const).filter((k) => lk[k] !== undefined);
        if (set.length > 0 && set.length < 3) {
          const missing = (['url', 'api_key', 'api_secret'] as const).filter((k) => lk[k] === undefined);
          ctx.addIssue({
            code: 'custom',
            message: `set all of url, api_key and api_secret or none; missing ${missing.join(', ')} (LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET)`,
          });
        }
      }),
    /**
     * Rupees each call in progress holds against the daily budget until its session ends (its
     * real cost is unknown when it is placed). A budget of N × this admits N concurrent calls.
     */
    call_reservation_inr: z.coerce
      .number({ error: 'must be a number of rupees' })
      .min(0, { error: 'must be from 0 to 1000000 rupees' })
      .max(1e6, { error: 'must be from 0 to 1000000 rupees' })
      .default(2),
    /** Let inbound routing webhooks use plain http:// (default: https only). */
    inbound_webhook_allow_http: flag.default(false),
    /** Let inbound routing webhooks reach private, loopback and link-local addresses (default: refused, SSRF). */
    inbound_webhook_allow_private: flag.default(false),
  })
  .superRefine((s, ctx) => {
    // A cloud recogniser named (as the default or for a language) needs its key.
    for (const provider of ['deepgram', 'sarvam'] as const) {
      const where = [
        ...(s.recognizer === provider ? ['recognizer'] : []),
        ...Object.entries(s.recognizers)
          .filter(([, p]) => p === provider)
          .map(([range]) => `recognizers.${range}`),
      ];
      if (where.length > 0 && s[provider].api_key === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [provider, 'api_key'],
          message: `${where.join(', ')} names ${provider}, but its API key is not set: export ${RECOGNIZER_KEY_ENV[provider]}=… (or set ${provider}.api_key in the config file)`,
        });
      }
    }
  });

/** Validated daemon settings. */
export type Settings = z.infer<typeof SettingsSchema>;

/** `http://host:port`, with an IPv6 host in brackets. */
export function httpUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The URL a client on this machine uses for a daemon bound to `host:port` (a wildcard host becomes loopback). */
export function clientUrl(host: string, port: number): string {
  return httpUrl(host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host, port);
}

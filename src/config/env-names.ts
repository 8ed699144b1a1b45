/**
 * The environment variables `vagent serve` reads and the settings each one sets
 * (docs/architecture.md "Settings"). One list: `loadSettings` reads through these tables, the
 * help of `vagent serve` prints them, and the README's "Settings" list is checked against them.
 *
 * This file imports nothing, so the CLI can print the help without loading the settings schema.
 */

/** Top-level settings: variable → setting key. */
export const ENV_KEYS: Readonly<Record<string, string>> = {
  VAGENT_HOST: 'host',
  VAGENT_PORT: 'port',
  VAGENT_AUTH_MODE: 'auth_mode',
  VAGENT_MASTER_KEY: 'master_key',
  VAGENT_TENANT_DAILY_BUDGET_INR: 'tenant_daily_budget_inr',
  VAGENT_TIMEZONE: 'timezone',
  VAGENT_IDEMPOTENCY_RETENTION_HOURS: 'idempotency_retention_hours',
  VAGENT_EVENTS_RETENTION_DAYS: 'events_retention_days',
  VAGENT_RETENTION_DAYS: 'retention_days',
  VAGENT_RECOGNIZER: 'recognizer',
  VAGENT_MEDIA_WORKERS: 'media_workers',
  VAGENT_BODY_LIMIT_BYTES: 'body_limit_bytes',
  VAGENT_LOG_LEVEL: 'log_level',
  VAGENT_PUBLIC_URL: 'public_url',
  VAGENT_SPEECH: 'speech',
  VAGENT_SPEECH_TIMEOUT_MS: 'speech_timeout_ms',
  VAGENT_AUDIO_CACHE_MAX_MB: 'audio_cache_max_mb',
  VAGENT_RECORDINGS_MAX_MB: 'recordings_max_mb',
  VAGENT_AUDIO_URL_KEEP_HOURS: 'audio_url_keep_hours',
  VAGENT_PRICING_FILE: 'pricing_file',
  VAGENT_AGENTS_DIR: 'agents_dir',
  VAGENT_CALL_RESERVATION_INR: 'call_reservation_inr',
  VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP: 'inbound_webhook_allow_http',
  VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE: 'inbound_webhook_allow_private',
};

/** The `livekit` block: variable → field. */
export const LIVEKIT_ENV: Readonly<Record<string, string>> = {
  LIVEKIT_URL: 'url',
  LIVEKIT_API_KEY: 'api_key',
  LIVEKIT_API_SECRET: 'api_secret',
  VAGENT_LIVEKIT_AGENT_NAME: 'agent_name',
  VAGENT_LIVEKIT_REQUEST_TIMEOUT_S: 'request_timeout_s',
  VAGENT_LIVEKIT_WAIT_UNTIL_ANSWERED: 'wait_until_answered',
};

/**
 * The speech providers' blocks (docs/media.md "Cloud speech recognition"; the cloud voices of
 * docs/agents.md "Voice" share them): block → variable → field.
 */
export const RECOGNIZER_ENV: Readonly<Record<'deepgram' | 'sarvam' | 'elevenlabs', Readonly<Record<string, string>>>> = {
  deepgram: { DEEPGRAM_API_KEY: 'api_key', VAGENT_DEEPGRAM_URL: 'url' },
  sarvam: { SARVAM_API_KEY: 'api_key', VAGENT_SARVAM_URL: 'url', VAGENT_SARVAM_TTS_URL: 'tts_url' },
  elevenlabs: { ELEVENLABS_API_KEY: 'api_key', VAGENT_ELEVENLABS_URL: 'url' },
};

/** The language model's block (docs/llm.md "Settings"); the key is read from here only. */
export const LLM_ENV: Readonly<Record<string, string>> = {
  VAGENT_LLM_BASE_URL: 'base_url',
  VAGENT_LLM_MODEL: 'model',
  VAGENT_LLM_TIMEOUT_MS: 'timeout_ms',
  VAGENT_LLM_MAX_RETRIES: 'max_retries',
  VAGENT_LLM_API_KEY: 'api_key',
};

/** One group of variables as `vagent serve --help` shows it: a title, the doc that explains them, the names. */
export interface EnvGroup {
  title: string;
  doc: string;
  names: string[];
}

/** Every variable `loadSettings` reads, grouped as the README's "Settings" list groups them, in the order of the tables. */
export function settingsEnvGroups(): EnvGroup[] {
  return [
    { title: 'daemon', doc: 'README.md "Settings"', names: ['VAGENT_CONFIG', 'VAGENT_STATE_DIR', ...Object.keys(ENV_KEYS)] },
    {
      title: 'speech recognition and cloud voices',
      doc: 'docs/media.md, docs/agents.md "Voice"',
      names: ['VAGENT_RECOGNIZERS', ...Object.values(RECOGNIZER_ENV).flatMap((names) => Object.keys(names))],
    },
    { title: 'LiveKit', doc: 'docs/calls.md', names: Object.keys(LIVEKIT_ENV) },
    { title: 'language model', doc: 'docs/llm.md', names: Object.keys(LLM_ENV) },
  ];
}

/**
 * Every environment variable `loadSettings` reads, in the order of its tables: the README's
 * "Settings" list names each of them (checked by test/unit/docs-agree.test.ts).
 */
export function settingsEnvNames(): string[] {
  return settingsEnvGroups().flatMap((g) => g.names);
}

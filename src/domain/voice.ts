/**
 * An agent's voice (docs/agents.md "Voice"): the embedded engine's voice, written as a plain
 * string as it always was (`voice: hi`), or a cloud voice naming its provider
 * (`voice: {provider: sarvam, speaker: anushka, model: bulbul:v2}`).
 *
 * The speech port takes a voice as one string, its *voice id*: an embedded voice is its own id;
 * a cloud voice's id is `<provider>/<model>/<voice>/<language>` ({@link voiceIdOf}), so that the
 * audio cache's key (engine, voice id, text) keeps every provider, model, voice and language
 * apart, and a clip of one voice is never played for another.
 */
import { z } from 'zod';

/** Cloud speech providers an agent's voice may name. */
export const CLOUD_VOICE_PROVIDERS = ['sarvam', 'elevenlabs'] as const;
/** One of {@link CLOUD_VOICE_PROVIDERS}. */
export type CloudVoiceProvider = (typeof CLOUD_VOICE_PROVIDERS)[number];

/** A provider's default model when the agent names none. */
export const DEFAULT_VOICE_MODEL: Readonly<Record<CloudVoiceProvider, string>> = {
  // https://docs.sarvam.ai/api-reference-docs/text-to-speech/convert
  sarvam: 'bulbul:v2',
  // https://elevenlabs.io/docs/api-reference/text-to-speech/convert
  elevenlabs: 'eleven_multilingual_v2',
};

/** Sarvam's speaker when the agent names none (the API's own default for bulbul:v2). */
export const DEFAULT_SARVAM_SPEAKER = 'anushka';

/**
 * Sarvam's speakers by model, as docs/agents.md "Voice" lists them (from
 * https://docs.sarvam.ai/api-reference-docs/text-to-speech/convert). A model not here is not
 * checked (its speakers are the provider's business).
 */
export const SARVAM_SPEAKERS: Readonly<Record<string, readonly string[]>> = {
  'bulbul:v2': ['anushka', 'manisha', 'vidya', 'arya', 'abhilash', 'karun', 'hitesh'],
};

/**
 * Languages Sarvam's bulbul speaks (`target_language_code`), by primary language subtag: the
 * eleven of https://docs.sarvam.ai/api-reference-docs/text-to-speech/convert (Odia is `od-IN`
 * there; its ISO 639-1 code is `or`).
 */
const SARVAM_LANGUAGES: Readonly<Record<string, string>> = {
  bn: 'bn-IN',
  en: 'en-IN',
  gu: 'gu-IN',
  hi: 'hi-IN',
  kn: 'kn-IN',
  ml: 'ml-IN',
  mr: 'mr-IN',
  od: 'od-IN',
  or: 'od-IN',
  pa: 'pa-IN',
  ta: 'ta-IN',
  te: 'te-IN',
};

/** Sarvam's `target_language_code` for an agent's BCP-47 language ('hi' → 'hi-IN'), or null when bulbul lacks it. */
export function sarvamLanguageOf(language: string): string | null {
  return SARVAM_LANGUAGES[language.split('-')[0]!.toLowerCase()] ?? null;
}

const VoicePart = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'letters, digits, _ . : and - only (1–64 characters)');

/** A cloud voice as an agent file writes it (validated; see {@link CloudVoice}). */
export const CloudVoiceSchema = z
  .object({
    provider: z.enum(CLOUD_VOICE_PROVIDERS),
    /** Sarvam's speaker (`anushka`, `abhilash`, …); default {@link DEFAULT_SARVAM_SPEAKER}. Sarvam only. */
    speaker: VoicePart.optional(),
    /** ElevenLabs' voice id (as in its voice library). ElevenLabs only, required there. */
    voice_id: VoicePart.optional(),
    /** The provider's model; default {@link DEFAULT_VOICE_MODEL}. */
    model: VoicePart.optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.provider === 'sarvam' && v.voice_id !== undefined)
      ctx.addIssue({ code: 'custom', path: ['voice_id'], message: 'Sarvam names its voices with speaker, not voice_id' });
    if (v.provider === 'sarvam' && v.speaker !== undefined) {
      const model = v.model ?? DEFAULT_VOICE_MODEL.sarvam;
      const speakers = SARVAM_SPEAKERS[model];
      if (speakers !== undefined && !speakers.includes(v.speaker.toLowerCase()))
        ctx.addIssue({
          code: 'custom',
          path: ['speaker'],
          message: `${v.speaker} is not a speaker of Sarvam's ${model}; its speakers are ${speakers.join(', ')}`,
        });
    }
    if (v.provider === 'elevenlabs') {
      if (v.speaker !== undefined)
        ctx.addIssue({ code: 'custom', path: ['speaker'], message: 'ElevenLabs names its voices with voice_id, not speaker' });
      if (v.voice_id === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['voice_id'],
          message: 'an ElevenLabs voice needs its voice_id (from the ElevenLabs voice library)',
        });
    }
  });
/** A cloud voice of an agent. */
export type CloudVoice = z.infer<typeof CloudVoiceSchema>;

/** The `voice` field of an agent: an embedded voice's name, or a cloud voice. */
export const AgentVoiceSchema = z.union([z.string().min(1).max(100), CloudVoiceSchema], {
  error: (issue) =>
    issue.code === 'invalid_union'
      ? 'must be the embedded engine\'s voice as text (e.g. "hi"), or a cloud voice {provider: sarvam, speaker: …} or {provider: elevenlabs, voice_id: …}'
      : undefined,
});
/** The `voice` field of an agent. */
export type AgentVoice = z.infer<typeof AgentVoiceSchema>;

/**
 * What is wrong with `voice` for an agent speaking `language` (a cloud provider that does not
 * speak it): none or one message, naming the languages the provider has.
 */
export function voiceLanguageIssues(voice: AgentVoice | undefined, language: string): string[] {
  if (typeof voice !== 'object' || voice.provider !== 'sarvam' || sarvamLanguageOf(language) !== null) return [];
  return [`Sarvam's voices do not speak ${language}; they speak ${[...new Set(Object.values(SARVAM_LANGUAGES))].join(', ')}`];
}

/** A cloud voice id taken apart ({@link parseCloudVoiceId}). */
export interface CloudVoiceRef {
  provider: CloudVoiceProvider;
  model: string;
  /** Sarvam's speaker or ElevenLabs' voice id. */
  voice: string;
  /** The agent's BCP-47 language. */
  language: string;
}

/**
 * The voice id of an agent's `voice` (see the module comment): an embedded voice's name as it
 * is; a cloud voice as `<provider>/<model>/<voice>/<language>`, defaults filled in.
 */
export function voiceIdOf(voice: AgentVoice, language: string): string {
  if (typeof voice === 'string') return voice;
  const name = voice.provider === 'sarvam' ? (voice.speaker ?? DEFAULT_SARVAM_SPEAKER) : voice.voice_id!;
  return `${voice.provider}/${voice.model ?? DEFAULT_VOICE_MODEL[voice.provider]}/${name}/${language}`;
}

/** The cloud voice a voice id names, or null for an embedded voice. */
export function parseCloudVoiceId(id: string): CloudVoiceRef | null {
  const parts = id.split('/');
  if (parts.length !== 4 || parts.some((p) => p === '')) return null;
  const [provider, model, voice, language] = parts as [string, string, string, string];
  if (!(CLOUD_VOICE_PROVIDERS as readonly string[]).includes(provider)) return null;
  return { provider: provider as CloudVoiceProvider, model, voice, language };
}

/** The settings naming each provider's API key and base URL (README "Settings"). */
const PROVIDER_SETTINGS: Readonly<Record<CloudVoiceProvider, { key: string; url: string; voice: string }>> = {
  sarvam: { key: 'SARVAM_API_KEY', url: 'VAGENT_SARVAM_TTS_URL', voice: 'voice.speaker and voice.model' },
  elevenlabs: { key: 'ELEVENLABS_API_KEY', url: 'VAGENT_ELEVENLABS_URL', voice: 'voice.voice_id and voice.model' },
};

/**
 * Why a cloud voice failed, for the operator, with the fix: from a clip's fallback mark
 * `fallback:<provider>:<why>` (`not_configured`, `http_<status>`, `unreachable`, `timeout`,
 * `bad_audio`, … — see src/app/speech-port.ts), e.g. "elevenlabs has no API key on the daemon
 * (set ELEVENLABS_API_KEY)". Names settings only, never a key or a text. Null when `fallback`
 * is not such a mark.
 */
export function voiceFailureMessage(fallback: string): string | null {
  const m = /^fallback:([a-z]+):([A-Za-z0-9_.-]{1,64})$/.exec(fallback);
  if (!m || !(CLOUD_VOICE_PROVIDERS as readonly string[]).includes(m[1]!)) return null;
  const provider = m[1] as CloudVoiceProvider;
  const why = m[2]!;
  const s = PROVIDER_SETTINGS[provider];
  if (why === 'not_configured') return `${provider} has no API key on the daemon (set ${s.key})`;
  if (why === 'unreachable') return `cannot reach ${provider} (check the network, or ${s.url})`;
  if (why === 'timeout') return `${provider} did not answer in time (see speech_timeout_ms)`;
  if (why === 'bad_audio') return `${provider} answered with audio the daemon cannot use`;
  const status = /^http_(\d{3})$/.exec(why)?.[1];
  if (status === '401' || status === '403') return `${provider} refused the API key (HTTP ${status}; check ${s.key})`;
  if (status === '429') return `${provider} is rate-limiting the daemon (HTTP 429; try again later)`;
  if (status !== undefined && status.startsWith('4')) return `${provider} answered ${status} (check ${s.voice})`;
  if (status !== undefined) return `${provider} answered ${status} (a fault on its side; try again later)`;
  return `${provider} failed (${why})`;
}

/**
 * Which recogniser hears a call (docs/media.md "2. Speech recognition", "Cloud speech
 * recognition"): chosen per agent language, from a default and per-language overrides in the
 * settings (`hi-IN` → Sarvam or Deepgram multi, `en-IN` → either, the embedded recogniser as
 * the offline fallback).
 *
 * Pure: settings and the agent's language in, a plain-data {@link RecognizerSpec} out (the media
 * worker builds the recogniser from it, see ./recognizer-factory.ts). The main thread calls it
 * once per call stream; `/v1/health` and the start-up notice call {@link describeRecognition}.
 *
 * Rules:
 * 1. The setting: the longest range of `recognizers` matching the language (RFC 4647 §3.3.1
 *    basic filtering, as {@link languageMatches}), else `recognizer`.
 * 2. `auto` and `pocketsphinx`: the embedded recogniser where it serves the language (English)
 *    and is installed; otherwise recognition is off for that language (DTMF still works).
 * 3. `deepgram` / `sarvam`: that provider where it serves the language and has its key, with
 *    the embedded one as the fallback when it serves the language (English); a language the
 *    provider does not serve gets the embedded one when it can, else off.
 * 4. `off`: off. `fake` (tests): the scripted recogniser, its script from the fake's own
 *    channel (./fake-script.ts).
 */
import { RECOGNIZER_KEY_ENV } from '../../config/schema.js';
import {
  canonicalLanguage,
  languageMatches,
  recognizerFor,
  type RecognizerCandidate,
  type RecognizerInfo,
} from '../../media/recognizer.js';
import { SARVAM_LANGUAGES } from './sarvam-protocol.js';
import type { RecognizerSpec } from '../../media/worker-protocol.js';

/** A recogniser setting: the default `recognizer` or a per-language one. */
export type RecognizerSettingName = 'auto' | 'pocketsphinx' | 'deepgram' | 'sarvam' | 'fake' | 'off';

/**
 * The recogniser of one call: the agent's language (a BCP-47 tag) and the call's parameters (a
 * carrier stream's custom parameters, or a LiveKit call's context) in, a spec out. The daemon's
 * composition root builds it from {@link chooseRecognizer}.
 * @throws RangeError if the language is not a well-formed BCP-47 tag
 */
export type CallRecognizerChoice = (language: string, params: Readonly<Record<string, unknown>>) => RecognizerSpec;

/** The settings the choice reads (the daemon's `Settings` fits). */
export interface RecognitionConfig {
  recognizer: RecognizerSettingName;
  /** Language range → setting. */
  recognizers?: Readonly<Record<string, Exclude<RecognizerSettingName, 'fake'>>>;
  deepgram?: { api_key?: string | undefined; url?: string | undefined; model?: string | undefined };
  sarvam?: { api_key?: string | undefined; url?: string | undefined; model?: string | undefined; mode?: string | undefined };
}

export { RECOGNIZER_KEY_ENV };

/** Whether the embedded recogniser is installed here (`pocketsphinxStatus()`), and why not. */
export interface EmbeddedStatus {
  available: boolean;
  reason?: string;
}

/** Languages the embedded recogniser serves (pocketsphinx-en-us: English). */
export const EMBEDDED_LANGUAGES: readonly string[] = ['en'];
/**
 * Languages given to Deepgram: any. nova-3 streams English variants and `multi` (Hindi–English
 * code-switching, see https://developers.deepgram.com/docs/models-languages-overview); the
 * adapter maps the agent's tag to Deepgram's `language`.
 */
export const DEEPGRAM_LANGUAGES: readonly string[] = ['*'];
/** Languages Sarvam's streaming speech-to-text serves: the adapter's own list, one source. */
export { SARVAM_LANGUAGES };

const INFO: Record<'pocketsphinx' | 'deepgram' | 'sarvam', RecognizerInfo> = {
  pocketsphinx: { provider: 'pocketsphinx', languages: EMBEDDED_LANGUAGES, priceBasis: 'audio_second' },
  deepgram: {
    provider: 'deepgram',
    languages: DEEPGRAM_LANGUAGES,
    priceBasis: 'audio_second',
    emitsPartials: true,
    endpoints: true,
  },
  sarvam: { provider: 'sarvam', languages: SARVAM_LANGUAGES, priceBasis: 'audio_second', endpoints: true },
};

/**
 * The setting in force for `language`: the longest matching range of `recognizers`, else the
 * default. `range` is the override's range, or null for the default.
 * @throws RangeError if `language` is not a well-formed BCP-47 tag
 */
export function settingFor(config: RecognitionConfig, language: string): { setting: RecognizerSettingName; range: string | null } {
  const tag = canonicalLanguage(language);
  let best: [string, Exclude<RecognizerSettingName, 'fake'>] | null = null;
  for (const [range, setting] of Object.entries(config.recognizers ?? {})) {
    if (!languageMatches(range, tag)) continue;
    if (!best || (best[0] === '*' ? 0 : best[0].length) < (range === '*' ? 0 : range.length)) best = [range, setting];
  }
  return best ? { setting: best[1], range: best[0] } : { setting: config.recognizer, range: null };
}

function candidates(
  config: RecognitionConfig,
  embedded: EmbeddedStatus,
): Record<'pocketsphinx' | 'deepgram' | 'sarvam', RecognizerCandidate> {
  const cloud = (p: 'deepgram' | 'sarvam'): RecognizerCandidate =>
    config[p]?.api_key
      ? { info: INFO[p], available: true }
      : { info: INFO[p], available: false, reason: `its API key is not set (${RECOGNIZER_KEY_ENV[p]})` };
  return {
    pocketsphinx: embedded.available
      ? { info: INFO.pocketsphinx, available: true }
      : { info: INFO.pocketsphinx, available: false, reason: embedded.reason ?? 'the embedded recogniser is not installed' },
    deepgram: cloud('deepgram'),
    sarvam: cloud('sarvam'),
  };
}

/**
 * The recogniser spec for a call in `language`.
 * @param config   the daemon's recognition settings
 * @param language the agent's language, a BCP-47 tag
 * @param embedded whether the embedded recogniser is installed
 * @returns a {@link RecognizerSpec}: `off` carries a reason fit for logs and `/v1/health`
 *          (never a key); a `fake` spec has an empty script (./fake-script.ts fills it)
 * @throws RangeError if `language` is not a well-formed BCP-47 tag
 */
export function chooseRecognizer(config: RecognitionConfig, language: string, embedded: EmbeddedStatus): RecognizerSpec {
  const tag = canonicalLanguage(language);
  const { setting, range } = settingFor(config, tag);
  const why = range === null ? 'recognizer' : `recognizers.${range}`;
  if (setting === 'off') return { kind: 'off', reason: `${why} is set to off` };
  if (setting === 'fake') return { kind: 'fake', script: [] };
  const c = candidates(config, embedded);
  const order = setting === 'auto' || setting === 'pocketsphinx' ? [c.pocketsphinx] : [c[setting], c.pocketsphinx];
  const choice = recognizerFor(tag, order);
  if ('reason' in choice) return { kind: 'off', reason: choice.reason };
  if (choice.provider === 'pocketsphinx') return { kind: 'pocketsphinx' };
  const fallback = recognizerFor(tag, [c.pocketsphinx]).provider === 'pocketsphinx' ? ('pocketsphinx' as const) : null;
  if (choice.provider === 'deepgram') {
    const d = config.deepgram ?? {};
    return {
      kind: 'deepgram',
      options: { apiKey: d.api_key!, ...(d.url ? { url: d.url } : {}), ...(d.model ? { model: d.model } : {}) },
      fallback,
    };
  }
  const s = config.sarvam ?? {};
  return {
    kind: 'sarvam',
    options: {
      apiKey: s.api_key!,
      ...(s.url ? { url: s.url } : {}),
      ...(s.model ? { model: s.model } : {}),
      ...(s.mode ? { mode: s.mode } : {}),
    },
    fallback,
  };
}

/** What hears one language range, for `/v1/health` and the start-up notice (no keys). */
export interface RecognitionLine {
  /** The language range: `*` for the default, else a `recognizers` range. */
  range: string;
  /** The setting in force there. */
  setting: RecognizerSettingName;
  /** The provider that hears it (`pocketsphinx`, `deepgram`, `sarvam`, `fake`), or null when recognition is off there. */
  provider: string | null;
  /** The fallback when the provider fails (`pocketsphinx`), or null. */
  fallback: string | null;
  /** Why recognition is off there, or a note (the embedded recogniser serves English only). */
  reason?: string;
}

/**
 * The recognition in force per language: the default (`*`) and each `recognizers` range, in the
 * order configured. A range is judged as a whole: a provider serves it when one of its ranges
 * overlaps it (`hi` and Sarvam's `hi-IN`), and the default is judged for any language (the
 * embedded recogniser is then noted as English-only). Agents whose tag a provider does not
 * serve exactly still get {@link chooseRecognizer}'s answer per call.
 */
export function describeRecognition(config: RecognitionConfig, embedded: EmbeddedStatus): RecognitionLine[] {
  const star = config.recognizers?.['*'];
  const lines: RecognitionLine[] = [describeRange(config, embedded, '*', star ?? config.recognizer, star ? 'recognizers.*' : 'recognizer')];
  for (const [range, setting] of Object.entries(config.recognizers ?? {})) {
    if (range !== '*') lines.push(describeRange(config, embedded, range, setting, `recognizers.${range}`));
  }
  return lines;
}

function describeRange(
  config: RecognitionConfig,
  embedded: EmbeddedStatus,
  range: string,
  setting: RecognizerSettingName,
  why: string,
): RecognitionLine {
  const overlaps = (info: RecognizerInfo): boolean =>
    range === '*' || info.languages.some((r) => languageMatches(r, range) || languageMatches(range, r));
  if (setting === 'off') return { range, setting, provider: null, fallback: null, reason: `${why} is set to off` };
  if (setting === 'fake') return { range, setting, provider: 'fake', fallback: null };
  const c = candidates(config, embedded);
  const order = setting === 'auto' || setting === 'pocketsphinx' ? [c.pocketsphinx] : [c[setting], c.pocketsphinx];
  const serving = order.filter((x) => overlaps(x.info));
  const chosen = serving.find((x) => x.available);
  const label = range === '*' ? 'the default' : range;
  if (!chosen) {
    // The embedded recogniser alone, not installed: its own words (how to install it).
    if (serving.length === 1 && serving[0] === c.pocketsphinx && order.length === 1)
      return { range, setting, provider: null, fallback: null, reason: c.pocketsphinx.reason! };
    const reason =
      serving.length > 0
        ? `speech recognition is off for ${label}: ${serving.map((x) => `${x.info.provider}: ${x.reason ?? 'unavailable'}`).join('; ')}`
        : `speech recognition is off for ${label}: no recogniser serves this language`;
    return { range, setting, provider: null, fallback: null, reason };
  }
  const englishOnly = range === '*' && c.pocketsphinx.available;
  if (chosen === c.pocketsphinx) {
    return {
      range,
      setting,
      provider: 'pocketsphinx',
      fallback: null,
      ...(englishOnly
        ? {
            reason: 'the embedded recogniser serves English only; other languages are off unless recognizers names a provider for them',
          }
        : {}),
    };
  }
  const fallback = c.pocketsphinx.available && overlaps(c.pocketsphinx.info) ? 'pocketsphinx' : null;
  return {
    range,
    setting,
    provider: chosen.info.provider,
    fallback,
    ...(fallback && englishOnly ? { reason: 'the embedded fallback serves English only' } : {}),
  };
}

/** What hears callers of one language, for `/v1/health?language=` (no keys). */
export interface LanguageRecognition {
  /** The language asked about, canonical (`hi-IN`). */
  language: string;
  /** The provider that hears it (`pocketsphinx`, `deepgram`, `sarvam`, `fake`), or null when recognition is off for it. */
  provider: string | null;
  /** The fallback when the provider fails (`pocketsphinx`), or null. */
  fallback: string | null;
  /** Why recognition is off for it (when `provider` is null). */
  reason?: string;
  /** The settings that would serve it (when `provider` is null), naming each setting and key. */
  fix?: string;
}

/**
 * What hears a caller speaking `language` ({@link chooseRecognizer}'s answer), and when nothing
 * does, why not and which settings would serve it: `recognizers.<tag>` set to a provider that
 * serves the language (Sarvam: its listed Indian languages; Deepgram: any) with its key
 * ({@link RECOGNIZER_KEY_ENV}), or for English the embedded recogniser installed.
 * @throws RangeError if `language` is not a well-formed BCP-47 tag
 */
export function recognitionOf(config: RecognitionConfig, language: string, embedded: EmbeddedStatus): LanguageRecognition {
  const tag = canonicalLanguage(language);
  const spec = chooseRecognizer(config, tag, embedded);
  if (spec.kind !== 'off') {
    const fallback = spec.kind === 'deepgram' || spec.kind === 'sarvam' ? spec.fallback : null;
    return { language: tag, provider: spec.kind, fallback };
  }
  const ways: string[] = [];
  if (INFO.pocketsphinx.languages.some((r) => languageMatches(r, tag)) && !embedded.available) {
    ways.push('install the embedded recogniser (apt-get install pocketsphinx pocketsphinx-en-us)');
  }
  for (const p of ['sarvam', 'deepgram'] as const) {
    if (!INFO[p].languages.some((r) => languageMatches(r, tag))) continue;
    const key = config[p]?.api_key ? '' : ` with ${RECOGNIZER_KEY_ENV[p]} exported`;
    ways.push(`set recognizers.${tag}: ${p} (VAGENT_RECOGNIZERS=${tag}=${p})${key}`);
  }
  return {
    language: tag,
    provider: null,
    fallback: null,
    reason: spec.reason,
    fix: ways.length > 0 ? `${ways.join('; or ')}; then restart vagent serve` : 'no recogniser vagent knows serves this language',
  };
}

/**
 * Reply audio (docs/architecture.md "Speech and the audio cache"): each clip's text normalised for speech, looked up in the
 * content-addressed cache, synthesised live only on a miss; the turn's audio is the clips
 * joined. URLs carry each clip's public name (a keyed MAC of its cache key), never the key. A synthesis failure (crash, hang, no engine) leaves that clip without audio and
 * never fails the turn.
 */
import type { Clip } from '../contract/index.js';
import { toSpokenText } from '../engine/spoken.js';
import type { ClipSpec } from '../engine/state.js';
import type { EnsuredClip, SpeechPort } from './speech-port.js';

/** A clip as the API shows it (docs/api-decisions.md; `Clip` of src/contract/sessions.ts): text, audio URLs (null without audio), engine flags. */
export type ClipView = Clip;

/** The audio of one reply. */
export interface RenderedReply {
  clips: ClipView[];
  /** The clips' spoken texts joined. */
  spokenText: string;
  /** URL of the whole reply (the clips joined), or null when no clip has audio. */
  audioUrl: string | null;
  /** Clips served from the cache / synthesised live. */
  hits: number;
  misses: number;
  /** Characters synthesised live. */
  liveChars: number;
  /** Characters synthesised live by each engine (pricing key): what `tts_inr` charges. */
  liveCharsBy: Record<string, number>;
  /**
   * One entry per clip whose cloud voice failed and was spoken by the embedded engine instead,
   * `fallback:<provider>:<why>` ({@link EnsuredClip.fallback}): the turn's trace shows them.
   */
  fallbacks: string[];
  /** Wall time spent waiting for live synthesis, ms. */
  ttsMs: number;
  /**
   * Cache keys of the audio this reply's URLs point to (each clip's, and the combination's):
   * what a session pins so the cache keeps them while it is open (README.md "What grows on disk, and what bounds it").
   */
  keys: string[];
}

const MEMO_LIMIT = 20_000;
/** Spoken forms and cache keys by engine, voice and language, then by clip text. */
const memo = new Map<string, Map<string, [string, string]>>();
let memoSize = 0;

/** The memo of one engine, voice and language (a turn looks it up once for all its clips). */
function memoOf(speech: SpeechPort, language: string, voice: string): Map<string, [string, string]> {
  const scope = `${speech.provider}\u0000${voice}\u0000${language}`;
  let m = memo.get(scope);
  if (!m) {
    m = new Map();
    memo.set(scope, m);
  }
  return m;
}

/**
 * The spoken form of a clip text and its cache key, remembered: most replies repeat an
 * agent's static lines, so normalising and hashing them again would be wasted work. Static
 * lines are the agent's own strings, whose hashes V8 keeps, so a hit costs one lookup.
 */
function spokenKey(speech: SpeechPort, m: Map<string, [string, string]>, text: string, language: string, voice: string): [string, string] {
  let hit = m.get(text);
  if (!hit) {
    const spoken = toSpokenText(text, language);
    hit = [spoken, speech.keyFor(spoken, voice)];
    if (memoSize >= MEMO_LIMIT) {
      for (const scoped of memo.values()) scoped.clear();
      memoSize = 0;
    }
    m.set(text, hit);
    memoSize += 1;
  }
  return hit;
}

/**
 * A text as the synthesiser is given it (`toSpokenText`), from the same memo as the replies:
 * sessions opened with the same context (a campaign's calls) render the same prompts.
 */
export function spokenTextOf(speech: SpeechPort, text: string, language: string, voice: string): string {
  return spokenKey(speech, memoOf(speech, language, voice), text, language, voice)[0];
}

/**
 * The URL of clip `key` under a base (`public_url` or the daemon's address):
 * `<base>/v1/audio/<name>.wav`, with the clip's public name ({@link SpeechPort.nameOf}).
 */
export function audioUrlOf(speech: SpeechPort, base: string, key: string): string {
  return `${base}/v1/audio/${speech.nameOf(key)}.wav`;
}

/** Each clip's spoken text and cache key. */
function spokenKeys(speech: SpeechPort, specs: readonly ClipSpec[], language: string, voice: string): { spoken: string[]; keys: string[] } {
  const m = memoOf(speech, language, voice);
  const spoken: string[] = [];
  const keys: string[] = [];
  for (const c of specs) {
    const [text, key] = spokenKey(speech, m, c.speak ?? c.text, language, voice);
    spoken.push(text);
    keys.push(key);
  }
  return { spoken, keys };
}

/** Each clip as the API shows it, with the audio URL of its key (null: no audio). */
function clipViews(speech: SpeechPort, specs: readonly ClipSpec[], keys: readonly (string | null)[], baseUrl: string): ClipView[] {
  return specs.map((c, i): ClipView => {
    const key = keys[i];
    const url = key ? audioUrlOf(speech, baseUrl, key) : null;
    return { text: c.text, audio_url: url, livekit_wav_url: url, ...c.flags };
  });
}

/**
 * The reply when every clip, and for several clips their combination, is in the cache already
 * (the common case: an agent's static lines are synthesised ahead), built without waiting for
 * anything; null otherwise. {@link renderClips} tries it first.
 *
 * @param baseUrl where clients fetch `/v1/audio/{name}.wav`
 */
export function renderCachedClips(
  speech: SpeechPort,
  specs: readonly ClipSpec[],
  language: string,
  voice: string,
  baseUrl: string,
): RenderedReply | null {
  if (specs.length === 0) return null;
  const { spoken, keys } = spokenKeys(speech, specs, language, voice);
  const whole = speech.combinedIfCached(keys);
  if (whole === null) return null;
  return {
    clips: clipViews(speech, specs, keys, baseUrl),
    spokenText: spoken.join(' '),
    audioUrl: audioUrlOf(speech, baseUrl, whole),
    hits: specs.length,
    misses: 0,
    liveChars: 0,
    liveCharsBy: {},
    fallbacks: [],
    ttsMs: 0,
    keys: keys.length === 1 ? keys : [...keys, whole],
  };
}

/**
 * Gives every clip its audio: from the cache at once when all of it is there
 * ({@link renderCachedClips}), else looking up, synthesising and combining clip by clip.
 *
 * @param baseUrl where clients fetch `/v1/audio/{name}.wav`
 * @param onError told of each synthesis failure (for the log), with no text of the clip
 * @param ensured clips of this reply already synthesised (or found) for it, by cache key of
 *        the text in `voice`: counted as that call says (its characters are this reply's to
 *        pay) rather than looked up or synthesised again (a phone turn's early clip,
 *        src/app/early-reply.ts)
 */
export async function renderClips(
  speech: SpeechPort,
  specs: ClipSpec[],
  language: string,
  voice: string,
  baseUrl: string,
  onError: (err: unknown) => void = () => {},
  ensured?: ReadonlyMap<string, EnsuredClip>,
): Promise<RenderedReply> {
  if (ensured === undefined || ensured.size === 0) {
    const cached = renderCachedClips(speech, specs, language, voice, baseUrl);
    if (cached !== null) return cached;
  }
  const started = performance.now();
  const reply: Metered = { hits: 0, misses: 0, liveChars: 0, liveCharsBy: {}, fallbacks: [] };
  let waited = false;
  const { spoken, keys } = spokenKeys(speech, specs, language, voice);
  const got = await Promise.all(
    spoken.map(async (text, i) => {
      const key = keys[i]!;
      const before = ensured?.get(key);
      if (before !== undefined) {
        meterClip(reply, before, speech.provider);
        return before.key;
      }
      if (speech.has(key)) {
        reply.hits += 1;
        return key;
      }
      waited = true;
      try {
        const clip: EnsuredClip = await speech.ensure(text, voice);
        meterClip(reply, clip, speech.provider);
        return clip.key;
      } catch (err) {
        reply.misses += 1;
        onError(err);
        return null;
      }
    }),
  );
  const { hits, misses, liveChars, liveCharsBy, fallbacks } = reply;
  const clips = clipViews(speech, specs, got, baseUrl);
  const have = got.filter((k): k is string => k !== null);
  let audioUrl: string | null = null;
  const used = [...have];
  if (have.length === 1) audioUrl = audioUrlOf(speech, baseUrl, have[0]!);
  else if (have.length > 1) {
    try {
      const whole = await speech.combine(have);
      used.push(whole);
      audioUrl = audioUrlOf(speech, baseUrl, whole);
    } catch (err) {
      onError(err);
    }
  }
  return {
    clips,
    spokenText: spoken.join(' '),
    audioUrl,
    hits,
    misses,
    liveChars,
    liveCharsBy,
    fallbacks,
    ttsMs: waited ? performance.now() - started : 0,
    keys: used,
  };
}

/** The counters of a reply's synthesis ({@link RenderedReply}'s). */
type Metered = Pick<RenderedReply, 'hits' | 'misses' | 'liveChars' | 'liveCharsBy' | 'fallbacks'>;

/**
 * Counts one clip's synthesis into `m`: a cache hit, or a live call with its characters under
 * the engine that spoke it (`clip.provider`, else `provider`, the port's), and its fallback mark.
 */
export function meterClip(m: Metered, clip: EnsuredClip, provider: string): void {
  if (clip.fallback !== undefined) m.fallbacks.push(clip.fallback);
  if (clip.cacheHit) {
    m.hits += 1;
    return;
  }
  m.misses += 1;
  m.liveChars += clip.chars;
  const by = clip.provider ?? provider;
  m.liveCharsBy[by] = (m.liveCharsBy[by] ?? 0) + clip.chars;
}

/**
 * Reply audio (DESIGN.md §6): each clip's text normalised for speech, looked up in the
 * content-addressed cache, synthesised live only on a miss; the turn's audio is the clips
 * joined. A synthesis failure (crash, hang, no engine) leaves that clip without audio and
 * never fails the turn.
 */
import { toSpokenText } from '../engine/spoken.js';
import type { ClipSpec } from '../engine/state.js';
import type { SpeechPort } from './speech-port.js';

/** A clip as the API shows it (spec: Clip): text, audio URLs (null without audio), engine flags. */
export type ClipView = {
  text: string;
  audio_url: string | null;
  livekit_wav_url: string | null;
} & ClipSpec['flags'] & { display_order?: number; requires_user_input?: boolean };

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
  /** Wall time spent waiting for live synthesis, ms. */
  ttsMs: number;
}

const MEMO_LIMIT = 20_000;
const memo = new Map<string, [string, string]>();

/**
 * The spoken form of a clip text and its cache key, remembered: most replies repeat an
 * agent's static lines, so normalising and hashing them again would be wasted work.
 */
function spokenKey(speech: SpeechPort, text: string, language: string, voice: string): [string, string] {
  const k = `${speech.provider}\u0000${voice}\u0000${language}\u0000${text}`;
  let hit = memo.get(k);
  if (!hit) {
    const spoken = toSpokenText(text, language);
    hit = [spoken, speech.keyFor(spoken, voice)];
    if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value!);
    memo.set(k, hit);
  }
  return hit;
}

/**
 * A text as the synthesiser is given it (`toSpokenText`), from the same memo as the replies:
 * sessions opened with the same context (a campaign's calls) render the same prompts.
 */
export function spokenTextOf(speech: SpeechPort, text: string, language: string, voice: string): string {
  return spokenKey(speech, text, language, voice)[0];
}

/** Builds audio URLs under a base (`public_url` or the daemon's address). */
export function audioUrlOf(base: string, sha: string): string {
  return `${base}/v1/audio/${sha}.wav`;
}

/**
 * Gives every clip its audio.
 *
 * @param baseUrl where clients fetch `/v1/audio/{sha}.wav`
 * @param onError told of each synthesis failure (for the log), with no text of the clip
 */
export async function renderClips(
  speech: SpeechPort,
  specs: ClipSpec[],
  language: string,
  voice: string,
  baseUrl: string,
  onError: (err: unknown) => void = () => {},
): Promise<RenderedReply> {
  const started = performance.now();
  let liveChars = 0;
  let hits = 0;
  let misses = 0;
  let waited = false;
  const spoken: string[] = [];
  const keys: string[] = [];
  for (const c of specs) {
    const [text, sha] = spokenKey(speech, c.speak ?? c.text, language, voice);
    spoken.push(text);
    keys.push(sha);
  }
  const shas = await Promise.all(spoken.map(async (text, i) => {
    const sha = keys[i]!;
    if (speech.has(sha)) {
      hits += 1;
      return sha;
    }
    waited = true;
    try {
      const clip = await speech.ensure(text, voice);
      if (clip.cacheHit) hits += 1;
      else {
        misses += 1;
        liveChars += clip.chars;
      }
      return clip.sha;
    } catch (err) {
      misses += 1;
      onError(err);
      return null;
    }
  }));
  const clips = specs.map((c, i): ClipView => {
    const sha = shas[i];
    const url = sha ? audioUrlOf(baseUrl, sha) : null;
    return { text: c.text, audio_url: url, livekit_wav_url: url, ...c.flags };
  });
  const have = shas.filter((s): s is string => s !== null);
  let audioUrl: string | null = null;
  if (have.length === 1) audioUrl = audioUrlOf(baseUrl, have[0]!);
  else if (have.length > 1) {
    try {
      audioUrl = audioUrlOf(baseUrl, await speech.combine(have));
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
    ttsMs: waited ? performance.now() - started : 0,
  };
}

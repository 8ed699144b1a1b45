/**
 * Keys and public names of the audio cache's clips, computed without touching the disk.
 *
 * A clip's *key* is a SHA-256 of what was spoken, by which engine and voice (or of the clips a
 * combination joins); its file is named by the key. A clip's public *name* is HMAC-SHA256 of
 * the key under the install's audio secret, so knowing a text does not give its URL (see
 * "audio URLs" in docs/api-decisions.md).
 */
import { createHash, createHmac } from 'node:crypto';
import { DEFAULT_GAP_MS } from '../../media/wav.js';

const SHA_RE = /^[0-9a-f]{64}$/;
/** Version of the key encoding and of the clip format; changing either changes every key. */
const KEY_VERSION = 'vagent-audio-v1 wav-48k-mono-pcm16';
/** Domain separation of clip names from any other use of the audio secret. */
const NAME_PREFIX = 'vagent-audio-name-v1\u0000';

/** Combined-clip keys remembered by {@link combinedClipKey} (oldest dropped first). */
const COMBINED_MEMO_LIMIT = 20_000;
const combinedKeys = new Map<string, string>();

/** sha256 hex of `parts` encoded unambiguously (a JSON array). */
function digest(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** True when `sha` has the shape of a cache key or a clip name: 64 lowercase hex characters. */
export function isAudioSha(sha: unknown): sha is string {
  return typeof sha === 'string' && SHA_RE.test(sha);
}

/**
 * The key of a clip: sha256 (hex) of the canonical encoding of the key version, the engine's
 * pricing key, the voice and the exact spoken text.
 */
export function clipKey(provider: string, voice: string, spokenText: string): string {
  return digest([KEY_VERSION, 'clip', provider, voice, spokenText]);
}

/**
 * The key of the concatenation of clips `shas` (in order) with `gapMs` of silence between.
 * Remembered: a turn's reply is most often a combination seen before (an answer and its
 * re-prompt), and a lookup costs less than hashing again.
 */
export function combinedClipKey(shas: readonly string[], gapMs: number = DEFAULT_GAP_MS): string {
  const memoKey = `${gapMs}:${shas.join(',')}`;
  let key = combinedKeys.get(memoKey);
  if (key === undefined) {
    key = digest([KEY_VERSION, 'combined', gapMs, ...shas]);
    if (combinedKeys.size >= COMBINED_MEMO_LIMIT) combinedKeys.delete(combinedKeys.keys().next().value!);
    combinedKeys.set(memoKey, key);
  }
  return key;
}

/** The public name of clip `key`: HMAC-SHA256 hex of the key under the audio `secret`. */
export function clipName(secret: Uint8Array, key: string): string {
  return createHmac('sha256', secret).update(NAME_PREFIX).update(key).digest('hex');
}

/**
 * A media worker's converted reply clips: each cached clip file read once and converted to an
 * outbound format (encoding and rate) once, kept in a least-recently-used map bounded in bytes,
 * so a clip many calls play (an opening, a re-prompt) costs one conversion per format.
 */
import { readFileSync } from 'node:fs';
import { clipToTelephony } from '../../media/audio.js';

/** Clip files converted to outbound frames, LRU by bytes (see the module comment). */
export class ClipFrameCache {
  private readonly cache = new Map<string, { frames: Uint8Array[]; bytes: number }>();
  private bytes = 0;

  /** @param maxBytes bytes of converted frames kept */
  constructor(private readonly maxBytes: number) {}

  /**
   * The frames of clip file `file` (a 48 kHz mono PCM16 WAV) in `encoding` at `sampleRate` Hz,
   * read and converted once; null when the file is gone (evicted) or unreadable.
   */
  frames(file: string, encoding: 'mulaw' | 'pcm16le', sampleRate: number): Uint8Array[] | null {
    const key = `${encoding}:${sampleRate}:${file}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit.frames;
    }
    let frames: Uint8Array[];
    try {
      frames = clipToTelephony(readFileSync(file), { encoding, sampleRate }).map((f) => f.payload);
    } catch {
      return null; // evicted or unreadable: the caller hears the other clips
    }
    const bytes = frames.reduce((n, f) => n + f.byteLength, 0);
    this.cache.set(key, { frames, bytes });
    this.bytes += bytes;
    for (const [k, v] of this.cache) {
      if (this.bytes <= this.maxBytes) break;
      this.cache.delete(k);
      this.bytes -= v.bytes;
    }
    return frames;
  }
}

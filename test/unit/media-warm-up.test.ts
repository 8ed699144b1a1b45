/**
 * The media workers' warm-up ahead of the first call (src/daemon/media-worker/worker-pool.ts `warm`,
 * src/daemon/media-worker/worker.ts, src/daemon/media-worker/warm-up.ts; docs/media.md, "The first call after start"):
 * each worker converts the clip files it is given into every outbound format it plays, runs
 * its silent warm-up streams without a trace outside it, and the pool says where it stands.
 * Needs the built worker (`npm run build`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CARRIER_DIALECTS } from '../../src/media/carriers/types.js';
import { CARRIER_MODULES } from '../../src/media/carriers/stream-state.js';
import { MediaWorkerPool } from '../../src/daemon/media-worker/worker-pool.js';
import { mediaWorkerPath } from '../../src/daemon/media-worker/spawn.js';
import { WARM_STREAMS, warmStreamFrames } from '../../src/daemon/media-worker/warm-up.js';
import { toWav48k } from '../../src/media/wav.js';

let pool: MediaWorkerPool | undefined;
let dir: string | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A 48 kHz WAV clip of `ms` of a 440 Hz tone, as the audio cache stores clips. */
function clipFile(name: string, ms: number): string {
  dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-warm-'));
  const samples = Int16Array.from({ length: (48_000 * ms) / 1000 }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 48_000)),
  );
  const file = path.join(dir, name);
  fs.writeFileSync(file, toWav48k({ samples, sampleRate: 48_000 }));
  return file;
}

describe('warm-up streams', () => {
  it('are well-formed carrier streams of each dialect: a start, then media (the daemon-side parsers accept every frame)', () => {
    expect(new Set(WARM_STREAMS.map((s) => s.dialect))).toEqual(new Set(CARRIER_DIALECTS));
    for (const { dialect, format } of WARM_STREAMS) {
      const events = warmStreamFrames(dialect, format).map((f) => CARRIER_MODULES[dialect].parse(f));
      const start = events.find((e) => e.type === 'start');
      expect(start, dialect).toBeDefined();
      expect(start!.type === 'start' && start!.format).toEqual(format);
      expect(events.filter((e) => e.type === 'media').length).toBeGreaterThan(0);
    }
  });
});

describe('MediaWorkerPool.warm', { timeout: 60_000 }, () => {
  it('has every worker convert the clips it can read, and reports where the warm-up stands', async () => {
    expect(fs.existsSync(mediaWorkerPath()), 'run npm run build first').toBe(true);
    pool = await MediaWorkerPool.start({ size: 2 });
    expect(pool.warmth()).toEqual({ ready: false, clips: 0 });

    // The first warm-up of a worker runs its silent streams: none of them shows as a stream.
    expect(await pool.warm()).toEqual([[], []]);
    expect(pool.warmth()).toEqual({ ready: true, clips: 0 });
    expect(pool.streams).toBe(0);

    const opening = clipFile('opening.wav', 800);
    const question = clipFile('question.wav', 300);
    const missing = path.join(dir!, 'evicted.wav');
    const answers = await pool.warm([opening, missing, question]);
    expect(answers).toEqual([
      [opening, question],
      [opening, question],
    ]);
    expect(pool.warmth()).toEqual({ ready: true, clips: 2 });

    // A file given again is not counted twice.
    await pool.warm([opening]);
    expect(pool.warmth()).toEqual({ ready: true, clips: 2 });
    expect(pool.streams).toBe(0);
  });

  it('a room process converts into its own format (48 kHz PCM) and runs no carrier stream', async () => {
    pool = await MediaWorkerPool.start({ size: 1, mode: 'process', workerData: { livekitRooms: true } });
    const opening = clipFile('opening.wav', 500);
    expect(await pool.warm([opening])).toEqual([[opening]]);
    expect(pool.warmth()).toEqual({ ready: true, clips: 1 });
  });
});

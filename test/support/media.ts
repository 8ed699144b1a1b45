/** PCM16 helpers shared by the media tests. */

/** `parts` concatenated. */
export function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Root-mean-square level of samples. */
export function rms(samples: Int16Array): number {
  let sum = 0;
  for (const v of samples) sum += v * v;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

/** A clip cut to its audible part (10 ms windows above about -50 dBFS), so its edges are the truth. */
export function trim(clip: Int16Array, rate: number): Int16Array {
  const win = rate / 100;
  const loud = (w: number) => rms(clip.subarray(w * win, (w + 1) * win)) > 100;
  const windows = Math.floor(clip.length / win);
  let first = 0;
  while (first < windows && !loud(first)) first++;
  let last = windows - 1;
  while (last > first && !loud(last)) last--;
  return clip.slice(first * win, (last + 1) * win);
}

/** One turn of the event loop: lets the media session handle what was just pushed. */
export const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A feeder of 16 kHz caller audio into a FakeTransport in 20 ms packets, the clock advancing
 * 20 ms per packet (a carrier's packet arrives once its last sample was spoken). Each call
 * returns the clock time of its first and last sample; `silence(ms)` feeds zeros.
 */
export function audioFeeder(transport: { pushAudio(pcm: Int16Array): void }, clock: { now(): number; advance(ms: number): void }) {
  const rate = 16_000;
  const chunk = rate / 50;
  async function feed(pcm: Int16Array): Promise<{ startAt: number; endAt: number }> {
    const startAt = clock.now();
    for (let at = 0; at < pcm.length; at += chunk) {
      clock.advance(20);
      transport.pushAudio(pcm.slice(at, at + chunk));
      await nextTick();
    }
    return { startAt, endAt: startAt + (pcm.length / rate) * 1000 };
  }
  const silence = (ms: number): Promise<{ startAt: number; endAt: number }> => feed(new Int16Array((rate * ms) / 1000));
  return { feed, silence };
}

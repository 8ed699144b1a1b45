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

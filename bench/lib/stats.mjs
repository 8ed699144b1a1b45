/**
 * Small statistics and formatting helpers for the bench report (no measuring here).
 * Percentiles use the nearest-rank method on the sorted samples; the median of an even
 * count is the mean of the two middle samples.
 */

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export const fixed = (x, d = 1) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : x.toFixed(d));

/** Renders rows (arrays of strings) as an aligned text table; column 0 left-aligned, the rest right. */
export function table(header, rows, indent = '  ') {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => String(r[i] ?? '').length)));
  const line = (r) => indent + r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('   ');
  return [line(header), indent + widths.map((w) => '-'.repeat(w)).join('   '), ...rows.map(line)].join('\n');
}

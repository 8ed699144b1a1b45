/** ISO 8601 reference times (`context.now`, `vagent chat --now`). */

/** Epoch ms of an ISO 8601 date-time that starts `YYYY-MM-DD`, or null when `value` is not one. */
export function isoTimeMs(value: unknown): number | null {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/** ISO 8601 reference times (`context.now`, `vagent chat --now`). */

/** Epoch ms of an ISO 8601 date-time that starts `YYYY-MM-DD`, or null when `value` is not one. */
export function isoTimeMs(value: unknown): number | null {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/** Offset of `timeZone` from UTC at instant `ms`, in ms (e.g. +19 800 000 for Asia/Kolkata). */
function zoneOffsetMs(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The calendar day containing `epochS` in `timeZone` (an IANA name), as `[start, end)` in
 * epoch seconds, and its date `YYYY-MM-DD`. Days with a DST change are 23 or 25 hours long.
 * Used for the daily spend budget (DESIGN.md §4 "Costs": the day boundary is the `timezone`
 * setting).
 *
 * @throws RangeError for an unknown time zone.
 */
export function dayBounds(epochS: number, timeZone: string): { start: number; end: number; date: string } {
  const ms = epochS * 1000;
  const local = new Date(ms + zoneOffsetMs(ms, timeZone));
  const y = local.getUTCFullYear();
  const m = local.getUTCMonth();
  const d = local.getUTCDate();
  // Local midnight → UTC: subtract the offset in force at that midnight (checked twice for DST).
  const midnight = (year: number, month: number, day: number) => {
    const naive = Date.UTC(year, month, day);
    let utc = naive - zoneOffsetMs(naive, timeZone);
    utc = naive - zoneOffsetMs(utc, timeZone);
    return utc / 1000;
  };
  const date = `${String(y).padStart(4, '0')}-${String(m + 1).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  return { start: midnight(y, m, d), end: midnight(y, m, d + 1), date };
}

/** ISO 8601 reference times (`context.now`, `vagent chat --now`) and local calendar days (the daily budget). */

/**
 * The ISO 8601 date-times accepted as a reference time: `YYYY-MM-DD`, optionally followed by
 * `THH:MM`, optional `:SS` and fraction (up to 9 digits), and an optional `Z` or `±HH:MM`
 * (or `±HHMM`) offset; without an offset the time is the machine's local time. Every string it
 * matches is one `Date.parse` reads (a day past the month's end rolls over, as there).
 * Published as is in the API document (`context.now`).
 */
export const ISO_TIME_PATTERN =
  /^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])(?:[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]{1,9})?)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])?)?$/;

/** Epoch ms of an ISO 8601 date-time matching {@link ISO_TIME_PATTERN}, or null when `value` is not one. */
export function isoTimeMs(value: unknown): number | null {
  if (typeof value !== 'string' || !ISO_TIME_PATTERN.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/** Formatters by time-zone name; an unknown name throws before it is cached. */
const formatters = new Map<string, Intl.DateTimeFormat>();
/** Distinct names kept; beyond it the cache starts afresh (names differing in case are distinct keys). */
const MAX_FORMATTERS = 64;

/** A cached `Intl.DateTimeFormat` giving the local date and 24-hour time in `timeZone`. */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** Local wall time at an instant: the date and the seconds since local midnight. */
interface LocalTime {
  year: number;
  month: number;
  day: number;
  /** `year * 10 000 + month * 100 + day`: orders local dates. */
  dayKey: number;
  secondOfDay: number;
}

/** The local wall time at epoch second `s` by formatter `f`. */
function localAt(f: Intl.DateTimeFormat, s: number): LocalTime {
  let year = 0,
    month = 0,
    day = 0,
    hour = 0,
    minute = 0,
    second = 0;
  for (const p of f.formatToParts(new Date(s * 1000))) {
    switch (p.type) {
      case 'year':
        year = Number(p.value);
        break;
      case 'month':
        month = Number(p.value);
        break;
      case 'day':
        day = Number(p.value);
        break;
      case 'hour':
        hour = Number(p.value);
        break;
      case 'minute':
        minute = Number(p.value);
        break;
      case 'second':
        second = Number(p.value);
        break;
      default:
        break;
    }
  }
  return { year, month, day, dayKey: year * 10_000 + month * 100 + day, secondOfDay: hour * 3600 + minute * 60 + second };
}

/**
 * The first whole second in `(lo, hi]` for which `test` holds, given `test(lo)` is false and
 * `test(hi)` true (binary search: `test` is monotone here).
 */
function firstSecond(lo: number, hi: number, test: (s: number) => boolean): number {
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (test(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

const HOUR = 3600;
const DAY = 86_400;
/** How far either side of the naive guess a boundary is searched first (offset changes are at most a few hours). */
const WINDOW = 3 * HOUR;

/**
 * The calendar day containing `epochS` in `timeZone` (an IANA name), as `[start, end)` in
 * epoch seconds, and its date `YYYY-MM-DD`. Days with a DST change are 23 or 25 hours long.
 * Used for the daily spend budget (docs/calls.md "The daily budget": the day boundary is the
 * `timezone` setting).
 *
 * `start` is the first second whose local date is `date` and `end` the first second whose
 * local date is later, so `start <= epochS < end` always holds, also where local midnight
 * does not exist (DST starting at 00:00, as in America/Santiago or America/Havana: the day
 * then starts at 01:00). Both are whole seconds; `epochS` may have a fraction.
 *
 * @param epochS an instant, in epoch seconds.
 * @param timeZone an IANA time-zone name such as `Asia/Kolkata`.
 * @throws RangeError for an unknown time zone (or a non-finite `epochS`).
 */
export function dayBounds(epochS: number, timeZone: string): { start: number; end: number; date: string } {
  const f = formatterFor(timeZone);
  const t = Math.floor(epochS);
  const here = localAt(f, t);
  const onOrAfter = (s: number) => localAt(f, s).dayKey >= here.dayKey;
  const after = (s: number) => localAt(f, s).dayKey > here.dayKey;

  // Start: the first second whose date is this one (`t` has it). Most days it is the naive guess,
  // local midnight at the offset in force at `t`; else binary-search around the guess.
  const guess = t - here.secondOfDay;
  let start = guess;
  if (!onOrAfter(guess) || onOrAfter(guess - 1)) {
    let lo = guess - WINDOW;
    while (onOrAfter(lo)) lo -= DAY;
    let hi = Math.min(guess + WINDOW, t);
    if (hi <= lo || !onOrAfter(hi)) hi = t;
    start = firstSecond(lo, hi, onOrAfter);
  }

  // End: the first second whose date is later (`t` does not have one), searched likewise.
  const endGuess = guess + DAY;
  let end = endGuess;
  if (!after(endGuess) || after(endGuess - 1)) {
    let hi = Math.max(endGuess + WINDOW, t + 1);
    while (!after(hi)) hi += DAY;
    let lo = Math.max(endGuess - WINDOW, t);
    if (lo >= hi || after(lo)) lo = t;
    end = firstSecond(lo, hi, after);
  }

  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  return { start, end, date: `${pad(here.year, 4)}-${pad(here.month, 2)}-${pad(here.day, 2)}` };
}

/** A calendar date `YYYY-MM-DD`. */
const DATE_PATTERN = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

/**
 * The first second of calendar date `date` (`YYYY-MM-DD`) in `timeZone`, epoch seconds (where
 * local midnight does not exist, the day's first second, as in {@link dayBounds}). Used for
 * `vagent admin purge --before DATE` and `vagent admin export --since/--before` (docs/api-decisions.md "Retention").

 * @returns null when `date` is not a real calendar date in that form.
 * @throws RangeError for an unknown time zone.
 */
export function startOfLocalDay(date: string, timeZone: string): number | null {
  const m = DATE_PATTERN.exec(date);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const noon = Date.UTC(y, mo - 1, d, 12) / 1000;
  const check = new Date(noon * 1000);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  // UTC noon of the date falls on that local date, or on a neighbour in zones far from UTC.
  let b = dayBounds(noon, timeZone);
  if (b.date > date) b = dayBounds(b.start - 1, timeZone);
  else if (b.date < date) b = dayBounds(b.end, timeZone);
  return b.date === date ? b.start : null;
}

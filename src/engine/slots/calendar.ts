/**
 * Calendar arithmetic for date slots (docs/agents.md "Capture and slot types": dates are `YYYY-MM-DD` relative to the
 * session's reference time in the agent's timezone). Pure: dates are plain {y, m, d} values
 * computed with UTC arithmetic; the timezone is only used to find the local date of `nowMs`.
 */

/** A calendar date: year, month 1–12, day 1–31. */
export interface CivilDate {
  y: number;
  m: number;
  d: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
    } catch {
      f = new Intl.DateTimeFormat('en-CA', { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' });
    }
    formatters.set(timezone, f);
  }
  return f;
}

/**
 * The local calendar date of `nowMs` (epoch ms) in the IANA zone `timezone`. An unknown zone
 * falls back to UTC rather than throwing (the agent schema does not validate zone names).
 */
export function localDate(nowMs: number, timezone: string): CivilDate {
  const parts = formatterFor(timezone).formatToParts(new Date(nowMs));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  return { y: get('year'), m: get('month'), d: get('day') };
}

function toUtc(c: CivilDate): number {
  return Date.UTC(c.y, c.m - 1, c.d);
}

function fromUtc(ms: number): CivilDate {
  const dt = new Date(ms);
  return { y: dt.getUTCFullYear(), m: dt.getUTCMonth() + 1, d: dt.getUTCDate() };
}

/** `c` plus `days` (may be negative). */
export function addDays(c: CivilDate, days: number): CivilDate {
  return fromUtc(toUtc(c) + days * 86_400_000);
}

/** Day of the week: 0 = Monday … 6 = Sunday. */
export function weekday(c: CivilDate): number {
  return (new Date(toUtc(c)).getUTCDay() + 6) % 7;
}

/** Number of days in month `m` (1–12) of year `y`. */
export function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/** True when `y-m-d` is a real date. */
export function isValid(y: number, m: number, d: number): boolean {
  return Number.isInteger(y) && m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

/** Negative, zero or positive as `a` is before, equal to or after `b`. */
function compare(a: CivilDate, b: CivilDate): number {
  return toUtc(a) - toUtc(b);
}

/** `YYYY-MM-DD`. */
export function formatDate(c: CivilDate): string {
  return `${String(c.y).padStart(4, '0')}-${String(c.m).padStart(2, '0')}-${String(c.d).padStart(2, '0')}`;
}

/**
 * Day `d` of month `m` without a year: this year's if that is today or later, else next
 * year's (the next occurrence on or after `today`). Null when the day does not exist.
 */
export function nextMonthDay(today: CivilDate, m: number, d: number): CivilDate | null {
  for (const y of [today.y, today.y + 1]) {
    if (!isValid(y, m, d)) continue;
    const c = { y, m, d };
    if (compare(c, today) >= 0) return c;
  }
  return isValid(today.y + 1, m, d) ? { y: today.y + 1, m, d } : null;
}

/**
 * Day `d` with neither month nor year ("the 14th"): this month's if that is today or later,
 * else the next month that has that day. Null for days above 31.
 */
export function nextDayOfMonth(today: CivilDate, d: number): CivilDate | null {
  let y = today.y;
  let m = today.m;
  for (let i = 0; i < 13; i++) {
    if (isValid(y, m, d) && compare({ y, m, d }, today) >= 0) return { y, m, d };
    m += 1;
    if (m > 12) {
      m = 1;
      y += 1;
    }
  }
  return null;
}

/** The month `offset` months after `today`'s month, as {y, m}. */
export function shiftMonth(today: CivilDate, offset: number): { y: number; m: number } {
  const idx = today.y * 12 + (today.m - 1) + offset;
  return { y: Math.floor(idx / 12), m: (idx % 12) + 1 };
}

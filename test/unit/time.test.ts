/**
 * Local calendar days (`dayBounds`, the daily spend budget's day) and ISO reference times
 * (`isoTimeMs`), including days where DST starts or ends at local midnight.
 */
import { describe, expect, it } from 'vitest';
import { dayBounds, isoTimeMs } from '../../src/domain/time.js';

const HOUR = 3600;
const at = (iso: string) => Date.parse(iso) / 1000;
const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

/** The bounds as ISO strings and the length in hours, for readable expectations. */
function day(instant: string, timeZone: string) {
  const b = dayBounds(at(instant), timeZone);
  return { date: b.date, start: iso(b.start), end: iso(b.end), hours: (b.end - b.start) / HOUR };
}

/** The local date (`YYYY-MM-DD`) of epoch second `s` in `timeZone`, by Intl directly. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function localDate(s: number, timeZone: string): string {
  let f = formatters.get(timeZone);
  if (!f) formatters.set(timeZone, (f = new Intl.DateTimeFormat('en-CA', { timeZone })));
  return f.format(new Date(s * 1000));
}

/** The calendar date before `date` (`YYYY-MM-DD`). */
function previousDate(date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(Date.UTC(y!, m! - 1, d! - 1)).toISOString().slice(0, 10);
}

describe('dayBounds', () => {
  it('Asia/Kolkata (no DST): 23:59 and 00:01 IST fall on different 24-hour days', () => {
    expect(day('2026-11-21T18:29:00Z', 'Asia/Kolkata')).toEqual({
      date: '2026-11-21',
      start: '2026-11-20T18:30:00Z',
      end: '2026-11-21T18:30:00Z',
      hours: 24,
    });
    expect(day('2026-11-21T18:31:00Z', 'Asia/Kolkata')).toEqual({
      date: '2026-11-22',
      start: '2026-11-21T18:30:00Z',
      end: '2026-11-22T18:30:00Z',
      hours: 24,
    });
    // The boundary second itself belongs to the new day.
    expect(day('2026-11-21T18:30:00Z', 'Asia/Kolkata').date).toBe('2026-11-22');
    expect(day('2026-11-21T18:29:59Z', 'Asia/Kolkata').date).toBe('2026-11-21');
  });

  it('UTC', () => {
    expect(day('2026-02-28T23:59:59Z', 'UTC')).toEqual({
      date: '2026-02-28',
      start: '2026-02-28T00:00:00Z',
      end: '2026-03-01T00:00:00Z',
      hours: 24,
    });
    expect(day('2028-02-29T00:00:00Z', 'UTC')).toEqual({
      date: '2028-02-29',
      start: '2028-02-29T00:00:00Z',
      end: '2028-03-01T00:00:00Z',
      hours: 24,
    });
  });

  it('Europe/London: spring-forward day is 23 hours, fall-back day 25', () => {
    expect(day('2026-03-29T12:00:00Z', 'Europe/London')).toEqual({
      date: '2026-03-29',
      start: '2026-03-29T00:00:00Z',
      end: '2026-03-29T23:00:00Z',
      hours: 23,
    });
    expect(day('2026-10-25T12:00:00Z', 'Europe/London')).toEqual({
      date: '2026-10-25',
      start: '2026-10-24T23:00:00Z',
      end: '2026-10-26T00:00:00Z',
      hours: 25,
    });
  });

  it('America/New_York: DST days at 02:00', () => {
    expect(day('2026-03-08T12:00:00Z', 'America/New_York')).toEqual({
      date: '2026-03-08',
      start: '2026-03-08T05:00:00Z',
      end: '2026-03-09T04:00:00Z',
      hours: 23,
    });
    expect(day('2026-11-01T05:30:00Z', 'America/New_York')).toEqual({
      date: '2026-11-01',
      start: '2026-11-01T04:00:00Z',
      end: '2026-11-02T05:00:00Z',
      hours: 25,
    });
    expect(day('2026-07-04T03:59:59Z', 'America/New_York').date).toBe('2026-07-03');
  });

  it('America/Santiago: DST starts at midnight, so 2026-09-06 starts at 01:00 local', () => {
    // 23:30 on the 5th (-04): the day runs until the clocks jump from 00:00 to 01:00 (-03).
    expect(day('2026-09-06T03:30:00Z', 'America/Santiago')).toEqual({
      date: '2026-09-05',
      start: '2026-09-05T04:00:00Z',
      end: '2026-09-06T04:00:00Z',
      hours: 24,
    });
    expect(day('2026-09-06T04:00:00Z', 'America/Santiago')).toEqual({
      date: '2026-09-06',
      start: '2026-09-06T04:00:00Z',
      end: '2026-09-07T03:00:00Z',
      hours: 23,
    });
    // DST ends at 24:00: 2026-04-04 (Saturday) is 25 hours long.
    expect(day('2026-04-04T12:00:00Z', 'America/Santiago')).toEqual({
      date: '2026-04-04',
      start: '2026-04-04T03:00:00Z',
      end: '2026-04-05T04:00:00Z',
      hours: 25,
    });
  });

  it('America/Havana: DST starts at midnight on 2026-03-08', () => {
    expect(day('2026-03-08T04:30:00Z', 'America/Havana')).toEqual({
      date: '2026-03-07',
      start: '2026-03-07T05:00:00Z',
      end: '2026-03-08T05:00:00Z',
      hours: 24,
    });
    expect(day('2026-03-08T05:30:00Z', 'America/Havana')).toEqual({
      date: '2026-03-08',
      start: '2026-03-08T05:00:00Z',
      end: '2026-03-09T04:00:00Z',
      hours: 23,
    });
  });

  it('Australia/Lord_Howe: a 30-minute DST change', () => {
    expect(day('2026-10-04T12:00:00Z', 'Australia/Lord_Howe')).toEqual({
      date: '2026-10-04',
      start: '2026-10-03T13:30:00Z',
      end: '2026-10-04T13:00:00Z',
      hours: 23.5,
    });
    expect(day('2026-04-05T12:00:00Z', 'Australia/Lord_Howe')).toEqual({
      date: '2026-04-05',
      start: '2026-04-04T13:00:00Z',
      end: '2026-04-05T13:30:00Z',
      hours: 24.5,
    });
  });

  it('Pacific/Kiritimati (UTC+14)', () => {
    expect(day('2025-12-31T10:00:00Z', 'Pacific/Kiritimati')).toEqual({
      date: '2026-01-01',
      start: '2025-12-31T10:00:00Z',
      end: '2026-01-01T10:00:00Z',
      hours: 24,
    });
    expect(day('2025-12-31T09:59:59Z', 'Pacific/Kiritimati').date).toBe('2025-12-31');
  });

  it('takes fractional seconds; bounds are whole seconds', () => {
    const b = dayBounds(at('2026-11-21T18:29:59Z') + 0.75, 'Asia/Kolkata');
    expect(b).toEqual({ date: '2026-11-21', start: at('2026-11-20T18:30:00Z'), end: at('2026-11-21T18:30:00Z') });
  });

  it('throws RangeError for an unknown time zone', () => {
    expect(() => dayBounds(at('2026-11-21T00:00:00Z'), 'Mars/Olympus_Mons')).toThrow(RangeError);
    expect(() => dayBounds(at('2026-11-21T00:00:00Z'), '')).toThrow(RangeError);
  });

  it("property: start <= t < end, the date is Intl's, start - 1 is the day before", { timeout: 30_000 }, () => {
    const zones = [
      'UTC',
      'Asia/Kolkata',
      'Europe/London',
      'America/New_York',
      'America/Santiago',
      'America/Havana',
      'Australia/Lord_Howe',
      'Pacific/Kiritimati',
      'Pacific/Chatham',
      'Asia/Beirut',
      'Africa/Casablanca',
      'America/St_Johns',
    ];
    const from = at('2026-01-01T00:00:00Z');
    const to = at('2027-01-01T00:00:00Z');
    const step = 7 * HOUR + 13 * 60 + 37; // co-prime-ish with days, so times of day vary
    for (const zone of zones) {
      for (let t = from; t < to; t += step) {
        const { start, end, date } = dayBounds(t, zone);
        const where = `${zone} at ${iso(t)}`;
        expect(start <= t && t < end, where).toBe(true);
        expect(Number.isInteger(start) && Number.isInteger(end), where).toBe(true);
        expect(date, where).toBe(localDate(t, zone));
        expect(localDate(start, zone), where).toBe(date);
        expect(localDate(end - 1, zone), where).toBe(date);
        expect(localDate(start - 1, zone), where).toBe(previousDate(date));
        expect(previousDate(localDate(end, zone)), where).toBe(date);
        const hours = (end - start) / HOUR;
        expect(hours >= 23 && hours <= 25, `${where}: ${hours} h`).toBe(true);
      }
    }
  });
});

describe('isoTimeMs', () => {
  it('accepts ISO 8601 date-times starting YYYY-MM-DD that Date.parse accepts', () => {
    expect(isoTimeMs('2026-11-21T10:30:00+05:30')).toBe(Date.parse('2026-11-21T05:00:00Z'));
    expect(isoTimeMs('2026-11-21T05:00:00Z')).toBe(Date.parse('2026-11-21T05:00:00Z'));
    expect(isoTimeMs('2026-11-21')).toBe(Date.parse('2026-11-21T00:00:00Z'));
  });

  it('returns null for anything else', () => {
    for (const bad of [
      'x',
      '',
      'tomorrow',
      '21-11-2026',
      'Nov 21 2026',
      '2026-13-45T00:00:00Z',
      1_780_000_000_000,
      null,
      undefined,
      {},
      ['2026-11-21'],
    ]) {
      expect(isoTimeMs(bad), String(bad)).toBeNull();
    }
  });
});

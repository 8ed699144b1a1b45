/**
 * The call's line state machine (src/domain/calls.ts; docs/calls.md "Call status"): the one
 * transition table every writer of `dial_status` goes through.
 */
import { describe, expect, it } from 'vitest';
import { canMoveDial, DIAL_STATUSES, DIAL_TRANSITIONS, dialSourcesOf, lineMayBeUp, type DialStatus } from '../../src/domain/calls.js';

describe('the call line state machine', () => {
  it('moves forward only: dialling → ringing → answered → completed, or to failed', () => {
    const path: DialStatus[] = ['dialling', 'ringing', 'answered', 'completed'];
    for (let i = 1; i < path.length; i++) expect(canMoveDial(path[i - 1]!, path[i]!)).toBe(true);
    expect(canMoveDial('dialling', 'answered')).toBe(true); // a dial that waited for the answer
    expect(canMoveDial('ringing', 'failed')).toBe(true);
    expect(canMoveDial('unknown', 'answered')).toBe(true); // the truth about an unknown dial arrives late
  });

  it('refuses every move backwards or out of a final state', () => {
    expect(canMoveDial('answered', 'ringing')).toBe(false);
    expect(canMoveDial('answered', 'failed')).toBe(false); // a call that connected did not fail
    expect(canMoveDial('completed', 'answered')).toBe(false); // an answer reported after the hang-up
    expect(canMoveDial('ringing', 'dialling')).toBe(false);
    expect(canMoveDial('ringing', 'unknown')).toBe(false);
    for (const final of ['completed', 'failed', 'not_dialled'] as const) {
      for (const to of DIAL_STATUSES) expect(canMoveDial(final, to), `${final} → ${to}`).toBe(false);
    }
    // No status moves to itself (a repeated report changes nothing) or back to the start.
    for (const s of DIAL_STATUSES) {
      expect(canMoveDial(s, s), `${s} → ${s}`).toBe(false);
      expect(canMoveDial(s, 'not_dialled')).toBe(false);
      expect(canMoveDial(s, 'dialling')).toBe(false);
    }
  });

  it('lists the sources of each status from the same table, and knows which lines may be up', () => {
    expect(dialSourcesOf('completed').sort()).toEqual(['answered', 'dialling', 'ringing', 'unknown']);
    expect(dialSourcesOf('answered').sort()).toEqual(['dialling', 'ringing', 'unknown']);
    expect(dialSourcesOf('dialling')).toEqual([]);
    for (const s of DIAL_STATUSES) expect(Object.keys(DIAL_TRANSITIONS)).toContain(s);
    expect(DIAL_STATUSES.filter(lineMayBeUp).sort()).toEqual(['answered', 'dialling', 'ringing', 'unknown']);
  });
});

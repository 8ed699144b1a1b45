/**
 * Money and counts in the CLI's human output (src/cli/output.ts): rupees
 * with paise, one pluralisation helper.
 */
import { describe, expect, it } from 'vitest';
import { formatTimeIn, plural, rupees } from '../../src/cli/output.js';

describe('rupees', () => {
  it('shows rupees with paise and Indian digit grouping', () => {
    expect(rupees(0.42)).toBe('₹0.42');
    expect(rupees(0)).toBe('₹0.00');
    expect(rupees(500)).toBe('₹500.00');
    expect(rupees(12.5)).toBe('₹12.50');
    expect(rupees(12500)).toBe('₹12,500.00');
    expect(rupees(125000)).toBe('₹1,25,000.00');
    expect(rupees(0.125)).toBe('₹0.13');
    expect(rupees(-3)).toBe('-₹3.00');
  });

  it('never shows a cost under a paisa as free', () => {
    expect(rupees(0.000125)).toBe('<₹0.01');
    expect(rupees(0.0049)).toBe('<₹0.01');
    expect(rupees(0.005)).toBe('₹0.01');
  });

  it('counts null and undefined as nothing', () => {
    expect(rupees(null)).toBe('₹0.00');
    expect(rupees(undefined)).toBe('₹0.00');
  });
});

describe('plural', () => {
  it('uses the singular for one only', () => {
    expect(plural(1, 'turn')).toBe('1 turn');
    expect(plural(0, 'turn')).toBe('0 turns');
    expect(plural(2, 'turn')).toBe('2 turns');
    expect(plural(1, 'outbound SIP trunk')).toBe('1 outbound SIP trunk');
    expect(plural(3, 'entry', 'entries')).toBe('3 entries');
  });
});

describe('formatTimeIn', () => {
  it('shows a time as the wall clock of the named zone, not of the machine', () => {
    // 2026-10-31T18:30:00Z is midnight in Kolkata (UTC+05:30).
    expect(formatTimeIn(Date.UTC(2026, 9, 31, 18, 30) / 1000, 'Asia/Kolkata')).toBe('2026-11-01 00:00 Asia/Kolkata');
    expect(formatTimeIn(Date.UTC(2026, 9, 31, 18, 30) / 1000, 'UTC')).toBe('2026-10-31 18:30 UTC');
  });
});

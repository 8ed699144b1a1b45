/**
 * The bounds on media sockets that have not proven who they are (src/daemon/unproven-sockets.ts,
 * docs/media.md "Before `start`"): per source address, in total, and a place freed once.
 */
import { describe, expect, it } from 'vitest';
import { UnprovenSockets, type UnprovenTicket } from '../../src/daemon/unproven-sockets.js';

const admitted = (r: UnprovenTicket | { refused: string }): UnprovenTicket => {
  if ('refused' in r) throw new Error(`refused: ${r.refused}`);
  return r;
};

describe('UnprovenSockets', () => {
  it('admits up to the per-address bound from one address, then refuses naming it; others are still admitted', () => {
    const u = new UnprovenSockets({ perAddress: 3, total: 10 });
    const tickets = [1, 2, 3].map(() => admitted(u.admit('10.0.0.1')));
    expect(u.admit('10.0.0.1')).toEqual({ refused: expect.stringContaining('from this address (3)') });
    admitted(u.admit('10.0.0.2'));
    expect(u.size).toBe(4);
    tickets[0]!.release();
    admitted(u.admit('10.0.0.1'));
  });

  it('refuses over the total bound whatever the address', () => {
    const u = new UnprovenSockets({ perAddress: 3, total: 5 });
    for (let i = 0; i < 5; i++) admitted(u.admit(`10.0.0.${i}`));
    expect(u.admit('10.0.0.99')).toEqual({ refused: expect.stringContaining('(5) are waiting for start') });
  });

  it('frees a place once however often a ticket is released', () => {
    const u = new UnprovenSockets({ perAddress: 2, total: 2 });
    const a = admitted(u.admit('x'));
    admitted(u.admit('x'));
    a.release();
    a.release();
    expect(u.size).toBe(1);
    admitted(u.admit('x'));
    expect('refused' in u.admit('x')).toBe(true);
  });
});

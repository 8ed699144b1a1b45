/**
 * A call's line moves with its event (docs/events.md): every use case that moves a call's
 * `dial_status` does it through {@link moveDialTx}, which appends `call.ringing`,
 * `call.answered` or `call.failed` in the same write step when the move happened (a late or
 * repeated report moves nothing and records nothing). `completed` records no event of its own:
 * the call's end is its session's, `call.ended` (lifecycle-events.ts).
 */
import type { DialStatus } from '../domain/calls.js';
import type { EndReason, EventType } from '../domain/events.js';
import type { DialMove } from '../store/index.js';
import type { ServiceDeps } from './context.js';
import type { Tx } from './unit-of-work.js';

const EVENT_OF: Partial<Record<DialStatus, EventType>> = { ringing: 'call.ringing', answered: 'call.answered', failed: 'call.failed' };

/**
 * Moves call `n`'s line to `to` (the transition table decides; see `CallRepo.moveDial`) and
 * appends its event when it moved. `data` adds to the event's data (`end_reason` of a failure).
 * @returns true when the call moved.
 */
export function moveDialTx(
  tx: Tx,
  deps: Pick<ServiceDeps, 'repos' | 'events'>,
  tenantId: string,
  n: number,
  to: DialStatus,
  m: DialMove = {},
  data: Record<string, unknown> = {},
): boolean {
  const moved = deps.repos.calls.moveDial(n, to, m);
  const type = EVENT_OF[to];
  if (moved && type !== undefined) {
    deps.events.appendTx(tx, {
      tenantId,
      type,
      callId: n,
      sessionId: n,
      data: {
        dial_status: to,
        ...(m.dial_error ? { error: m.dial_error } : {}),
        ...(m.answered_at ? { answered_at: m.answered_at } : {}),
        ...data,
      },
    });
  }
  return moved;
}

/**
 * Why a dial that did not connect ended, from the SIP status the carrier answered with (RFC 3261
 * §21: 486 Busy Here and 600 Busy Everywhere are busy; 408 Request Timeout, 480 Temporarily
 * Unavailable and 487 Request Terminated after ringing are no answer), or from LiveKit's
 * participant disconnect reason (`USER_REJECTED`: busy or declined; `USER_UNAVAILABLE`: no answer).
 */
export function dialEndReason(sipStatus: number | null, livekitReason: string | null = null): EndReason {
  if (sipStatus === 486 || sipStatus === 600 || livekitReason === 'USER_REJECTED') return 'busy';
  if (sipStatus === 408 || sipStatus === 480 || sipStatus === 487 || livekitReason === 'USER_UNAVAILABLE') return 'no_answer';
  return 'dial_failed';
}

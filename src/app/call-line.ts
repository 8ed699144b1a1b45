/**
 * The phone line of a call after it was placed (`POST /v1/calls/{id}/hangup`; docs/calls.md
 * "Call status", "Hanging up").
 *
 * Hanging up asks the provider first (LiveKit's RoomService: remove the SIP participant,
 * delete the room) and only then, in one write, ends the call's session and moves its line to
 * `completed` through the transition table of domain/calls.ts. A provider that refuses or
 * does not answer leaves everything as it was (`hangup_failed`, retryable); a line the
 * provider no longer has is `already_gone`, which is success. Ending the session of a dialled
 * call (`POST /v1/sessions/{id}/end`) hangs up through {@link CallLineService.releaseLine}.
 * A call dialled without waiting for the answer is watched until the callee picks up
 * ({@link CallLineService.watchAnswer}).
 */
import { lineMayBeUp, type LineOutcome } from '../domain/calls.js';
import { ApiError } from '../domain/errors.js';
import { shortId } from '../domain/ids.js';
import type { CallHangup } from '../contract/index.js';
import { scoped } from './access.js';
import { callRoom, callStatusView, parseCallId } from './call-views.js';
import type { Principal, ServiceDeps } from './context.js';
import type { SessionService } from './sessions.js';
import type { Committed, Scope, Tx } from './unit-of-work.js';
import { moveDialTx } from './call-events.js';
import { HangupError, type TelephonyPort } from './telephony-port.js';

/** The hang-up response (extension `POST /v1/calls/{call_id}/hangup`). */
export type { CallHangup };

/**
 * A call's line released ahead of its session's end: what became of it, and the write that
 * records it (`dial_status` → `completed` where the transition table allows), to run in the
 * same transaction as the session's end.
 */
export interface ReleasedLine {
  line: LineOutcome;
  record: (tx: Tx) => void;
}

/** Seconds a ringing call is watched beyond its ringing timeout (LiveKit's own margin is 2 s). */
const ANSWER_WATCH_MARGIN_S = 5;

/** Hangs up calls carried by this daemon's carrier media streams (docs/media.md). */
export interface MediaLines {
  /** Hangs up stream call `n` (the stream closes); false when no stream of this daemon carries it. */
  hangUp(n: number): boolean;
}

/** Hang-up use cases, and the watch of calls left ringing. */
export class CallLineService {
  private readonly stopping = new AbortController();
  private mediaLines: MediaLines | null = null;

  /** Connects the carrier media streams, so hanging up a call they carry closes its stream. */
  setMediaLines(lines: MediaLines): void {
    this.mediaLines = lines;
  }

  constructor(
    private readonly deps: ServiceDeps,
    private readonly sessions: SessionService,
    private readonly telephony: TelephonyPort,
  ) {}

  /**
   * Hangs up a call (extension `POST /v1/calls/{call_id}/hangup`): its line is hung up through
   * the provider when it may be up, its session ends (summary built, budget reservation
   * released) and its line becomes `completed`, all in one step of the unit of work. A call
   * whose line is already gone, or that was never dialled, is ended all the same, and `line`
   * says so. Hanging up an ended call again answers the same way (`already_gone`).
   * @returns the committed step; its view is the call's status plus `line`.
   * @throws ApiError session_not_found (malformed id), not_found (missing/foreign call),
   *         telephony_not_configured (the line may be up but no provider is configured),
   *         hangup_failed (the provider refused or did not answer; nothing changed, retry).
   */
  async hangUp(principal: Principal, callId: string, scope: Scope): Promise<Committed<CallHangup>> {
    const n = parseCallId(callId);
    const row = scoped(this.deps, principal, this.deps.repos.calls.get(n), callId);
    if (!row) throw new ApiError('not_found', `no call ${shortId(callId)}`, { param: 'call_id' });
    const released = (await this.releaseLine(n, true))!;
    const ending = await this.sessions.beginEnd(principal, `se_${n}`, { lineHandled: true });
    let committed = false;
    try {
      const done = await this.deps.uow.run(scope, (tx): CallHangup => {
        this.sessions.endTx(tx, ending);
        released.record(tx);
        return { ...callStatusView(this.deps.repos.calls.get(n)!), line: released.line };
      });
      committed = !done.replayed;
      return done;
    } finally {
      this.sessions.afterEnd(ending, committed);
    }
  }

  /**
   * Watches ringing call `n` (dialled without waiting for the answer) and marks it answered,
   * through the line's transition table, when its SIP participant turns `active`; LiveKit
   * sends no webhook for that. Runs in the background for at most `ringingTimeoutS` + 5 s;
   * never throws (a failed watch leaves the call ringing).
   */
  watchAnswer(n: number, roomName: string, identity: string, ringingTimeoutS: number): void {
    void (async () => {
      try {
        const outcome = await this.telephony.watchAnswer(roomName, identity, ringingTimeoutS + ANSWER_WATCH_MARGIN_S, this.stopping.signal);
        if (outcome !== 'answered' || this.stopping.signal.aborted) return;
        const at = this.deps.nowS();
        await this.deps.uow.write((tx) =>
          moveDialTx(tx, this.deps, this.deps.repos.calls.get(n)!.tenant_id, n, 'answered', { answered_at: at }),
        );
      } catch {
        // The store closed (shutdown) or the write failed: the call stays ringing.
      }
    })();
  }

  /**
   * Ends the prepared calls whose stream never arrived (docs/calls.md "Prepared calls that
   * never connect"): a call prepared without `dial` whose carrier stream has not attached by its
   * deadline — prepared at + `max_call_duration_s`, stored as `reserve_until`, so the deadline
   * survives restarts — has its session ended (summary built, budget hold released) and the
   * reason in its `dial_error`; `dial_status` stays `not_dialled` (there never was a line). At
   * most `limit` per run; a call ended meanwhile (hung up, or a stream attached) is skipped.
   * @returns how many it ended.
   */
  async endExpiredPrepared(limit = 100): Promise<number> {
    let ended = 0;
    for (const c of this.deps.repos.calls.expiredPrepared(this.deps.nowS(), limit)) {
      const waitedS = Math.round(c.reserve_until - c.created_at);
      const reason = `no carrier stream arrived within ${waitedS} s (max_call_duration_s) of preparing the call; vagent ended it`;
      try {
        const ending = await this.sessions.beginEnd(expiryPrincipal(c.tenant_id), `se_${c.id}`, {
          lineHandled: true,
          endReason: 'no_answer',
        });
        let committed = false;
        try {
          const endedNow = await this.deps.uow.write((tx) => {
            // Hung up meanwhile: the session's end already happened, and its reason is not ours.
            const open = this.deps.repos.calls.get(c.id)?.session_status === 'open';
            this.sessions.endTx(tx, ending);
            if (open) this.deps.repos.calls.notePreparedEnd(c.id, reason);
            return open;
          });
          committed = true;
          if (endedNow) ended++;
        } finally {
          this.sessions.afterEnd(ending, committed);
        }
      } catch {
        // Purged, or the store is closing: the next run (or the next start) sees it again if it is still open.
      }
    }
    return ended;
  }

  /** Stops watching ringing calls (shutdown, before the store closes). */
  stop(): void {
    this.stopping.abort();
  }

  /**
   * Hangs up the line of session `n`'s call, if it has one that may be up, ahead of the
   * session's end (used by the hang-up above and by `POST /v1/sessions/{id}/end`).
   * @param required true: a line that may be up with no provider configured is an error;
   *        false: it is left as it is (the session still ends; `dial_status` is kept).
   * @returns what became of the line and the write recording it, or null when session `n` has
   *          no call (or, not required, no provider to ask).
   * @throws ApiError telephony_not_configured (when required), hangup_failed.
   */
  async releaseLine(n: number, required: boolean): Promise<ReleasedLine | null> {
    const row = this.deps.repos.calls.get(n);
    if (!row) return null;
    const record = (_tx: Tx) => {
      this.deps.repos.calls.moveDial(n, 'completed');
    };
    if (row.dial_status === 'not_dialled') return { line: 'not_dialled', record };
    if (row.transport !== null && row.transport !== 'livekit') {
      // A carrier stream: vagent hangs up by closing it (the carrier then ends the call leg).
      return { line: this.mediaLines?.hangUp(n) ? 'hung_up' : 'already_gone', record };
    }
    if (!lineMayBeUp(row.dial_status) || row.room_name === null) return { line: 'already_gone', record };
    if (!this.telephony.configured) {
      if (!required) return null;
      throw new ApiError(
        'telephony_not_configured',
        `call cl_${n} may still be on the line but no telephony provider is configured to hang it up: set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET for vagent serve`,
        { param: 'call_id' },
      );
    }
    try {
      // Outbound: vagent named the phone participant; inbound: deleting the room hangs up.
      const { line } = await this.telephony.hangUp(row.room_name, row.direction === 'outbound' ? callRoom(n).identity : null);
      return { line, record };
    } catch (err) {
      if (err instanceof HangupError) {
        throw new ApiError('hangup_failed', `call cl_${n} was not hung up and nothing changed: ${err.message}; try again`);
      }
      throw err;
    }
  }
}

/** The principal (the API key holder) the prepared-call expiry writes under (audit). */
function expiryPrincipal(tenantId: string): Principal {
  return { tenantId, keyId: 'prepared-call-expiry', requestId: 'prepared-call-expiry', method: 'POST', route: '/v1/calls' };
}

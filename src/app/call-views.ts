/**
 * Call views and identities (docs/calls.md): a call row as `GET /v1/calls/{call_id}` shows it,
 * the LiveKit room and phone participant of call `cl_<N>`, call ids, and the errors a retry of
 * an earlier dial attempt gets.
 */
import { ApiError } from '../domain/errors.js';
import { parseSessionNumber, shortId } from '../domain/ids.js';
import { costView } from '../domain/money.js';
import type { CallStatus } from '../contract/index.js';
import type { CallRow, CallWithSession } from '../store/index.js';
import { keyReuseError } from './idempotency.js';
import type { SessionMetrics } from './session-model.js';
import type { DialAttempt } from './unit-of-work.js';

/** The status response (`CallStatusSchema` in src/contract/calls.ts), with vagent's extension fields after `cost`. */
export type CallStatusView = CallStatus;

/** The room and SIP participant identity of call `cl_<n>` (docs/calls.md "Dialling"). */
export function callRoom(n: number): { roomName: string; identity: string } {
  return { roomName: `call-cl_${n}`, identity: `sip-cl_${n}` };
}

/** The metadata of call `cl_<n>`'s SIP participant (`participantMetadata`): which call and tenant it is. */
export function callMetadata(n: number, tenantId: string): string {
  return JSON.stringify({ call_id: `cl_${n}`, session_id: `se_${n}`, tenant: tenantId });
}

/**
 * Builds the status view of a call row; `recordingUrl`: where its recording is served, or null
 * when it has none (docs/media.md "Recordings").
 */
export function callStatusView(row: CallWithSession, recordingUrl: string | null = null): CallStatusView {
  const metrics = JSON.parse(row.metrics) as SessionMetrics;
  const ended = row.session_status === 'ended';
  return {
    call_id: `cl_${row.id}`,
    session_id: `se_${row.id}`,
    agent_id: row.agent_id,
    status: ended ? 'completed' : 'in_progress',
    started_at: row.created_at,
    ended_at: ended ? row.ended_at : null,
    duration_s: ended && row.ended_at !== null ? Math.max(0, Math.round((row.ended_at - row.created_at) * 1000) / 1000) : null,
    customer_name: row.customer_name,
    cost: costView(metrics.cost),
    direction: row.direction,
    to: row.to_number,
    from: row.from_number,
    dial_status: row.dial_status,
    dial_error: row.dial_error,
    trunk_id: row.trunk_id,
    room_name: row.room_name,
    provider_call_id: row.provider_call_id,
    answered_at: row.answered_at,
    transport: row.transport,
    source: row.source,
    recording_url: recordingUrl,
  };
}

/**
 * The number N of call id `cl_<N>`.
 * @throws ApiError session_not_found for a malformed id (lookup is keyed by session).
 */
export function parseCallId(callId: string): number {
  const n = parseSessionNumber(callId, 'call');
  if (n === null)
    throw new ApiError('session_not_found', `call id ${shortId(callId)} is malformed: cl_ followed by a number`, {
      param: 'call_id',
    });
  return n;
}

/** The error a request gets for an attempt an earlier dial was placed under. */
export function earlierAttemptError(call: CallRow, attempt: DialAttempt): ApiError {
  if (call.idempotency_print !== null && call.idempotency_print !== attempt.request) return keyReuseError();
  if (call.dial_status === 'failed') {
    return new ApiError(
      'dial_failed',
      `dial of cl_${call.id} failed: ${call.dial_error ?? 'the carrier refused the call'} (an earlier attempt under this Idempotency-Key; ` +
        'the phone may have rung, so it is not dialled again: use a new key to call again)',
    );
  }
  return outcomeUnknown(call);
}

export function outcomeUnknown(call: Pick<CallRow, 'id' | 'dial_error'>): ApiError {
  return new ApiError(
    'dial_outcome_unknown',
    `the outcome of dial cl_${call.id} under this Idempotency-Key is unknown (${call.dial_error ?? 'LiveKit did not answer'}); ` +
      `vagent will not dial it again: check the call with GET /v1/calls/cl_${call.id} (vagent call show cl_${call.id}) or in LiveKit, and use a new key to place a new call`,
  );
}

/**
 * Call constants and the call's line state machine, shared by the daemon and the CLI (bounds
 * and defaults of `ringing_timeout_s` and `max_call_duration_s`: docs/api-decisions.md "Calls";
 * the states: docs/calls.md "Call status").
 */

/** Bounds and defaults of the dial timers, in whole seconds. */
export const DIAL_LIMITS = {
  ringing_timeout_s: { min: 5, max: 120, default: 30 },
  max_call_duration_s: { min: 10, max: 21_600, default: 1800 },
} as const;

/**
 * Where a call's phone line stands (`dial_status`, an extension field of Call status):
 * - `not_dialled`: prepared only; no line ever existed.
 * - `dialling`: the dial is committed and LiveKit has not answered the request yet.
 * - `ringing`: LiveKit accepted the dial; the callee has not answered (as far as vagent knows).
 * - `answered`: the callee answered (or, inbound, vagent answered the caller).
 * - `completed`: the line was up or ringing and has ended (hung up by either side).
 * - `failed`: the call never connected (busy, declined, no answer, LiveKit refused it).
 * - `unknown`: LiveKit never said whether the dial was placed (never re-dialled blindly).
 */
/**
 * Who made a call (docs/api-decisions.md "Simulated calls"): `phone`, a call on a line (a
 * carrier stream, a LiveKit room, a prepared call waiting for its stream); `simulator`, a stream
 * `vagent call simulate` opened with an API key. A label for reports: it changes nothing else
 * (budgets, costs and retention treat both alike).
 */
export const CALL_SOURCES = ['phone', 'simulator'] as const;
/** One of {@link CALL_SOURCES}. */
export type CallSource = (typeof CALL_SOURCES)[number];

export const DIAL_STATUSES = ['not_dialled', 'dialling', 'ringing', 'answered', 'completed', 'failed', 'unknown'] as const;

/** One of {@link DIAL_STATUSES}. */
export type DialStatus = (typeof DIAL_STATUSES)[number];

/**
 * The only moves a call's line may make: `DIAL_TRANSITIONS[from]` lists the statuses `from`
 * may become. Every writer of `dial_status` goes through it (the call repository guards each
 * update with it), so a late or repeated report — a webhook after the hang-up, a dial's answer
 * after its session ended — can never move a call backwards. `failed`, `completed` and
 * `not_dialled` are final.
 */
export const DIAL_TRANSITIONS: Readonly<Record<DialStatus, readonly DialStatus[]>> = {
  // Final for every report. The one other way out: a carrier stream attaching to the prepared
  // call while its session is open (CallRepo.attachTransport): → answered.
  not_dialled: [],
  dialling: ['ringing', 'answered', 'completed', 'failed', 'unknown'],
  ringing: ['answered', 'completed', 'failed'],
  answered: ['completed'],
  // The truth about a dial of unknown outcome may arrive later (a webhook, a hang-up).
  unknown: ['answered', 'completed', 'failed'],
  completed: [],
  failed: [],
};

/** True when a call's line may move from `from` to `to` (see {@link DIAL_TRANSITIONS}). */
export function canMoveDial(from: DialStatus, to: DialStatus): boolean {
  return DIAL_TRANSITIONS[from].includes(to);
}

/** The statuses from which a call's line may become `to`. */
export function dialSourcesOf(to: DialStatus): DialStatus[] {
  return DIAL_STATUSES.filter((from) => canMoveDial(from, to));
}

/**
 * True when the line of a call in `status` may still be up at LiveKit (so hanging it up means
 * asking LiveKit): a dial in flight, ringing, answered, or of unknown outcome.
 */
export function lineMayBeUp(status: DialStatus): boolean {
  return canMoveDial(status, 'completed');
}

/**
 * What `POST /v1/calls/{call_id}/hangup` found (extension; docs/calls.md "Hanging up"):
 * `hung_up` — LiveKit removed the phone participant; `already_gone` — the line had ended
 * before (LiveKit answered not_found, or the call had already completed or failed);
 * `not_dialled` — a prepared call, with no line to hang up.
 */
export type LineOutcome = 'hung_up' | 'already_gone' | 'not_dialled';

/**
 * `vagent call place`: the `POST /v1/calls` body built from the flags and checked locally, the
 * request, and the placement printed (docs/calls.md).
 *
 * `place` always sends an `Idempotency-Key` (`--idempotency-key`, or a random one) and the
 * client retries a request lost in transit with that same key, so one command never dials
 * twice. When it cannot get an answer at all, the error names the key to retry with.
 */
import crypto from 'node:crypto';
import { ApiResponseError, DaemonUnreachableError, type CallPlacement, type PlaceCallBody } from '../../client/index.js';
import { DIAL_LIMITS } from '../../domain/calls.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../domain/ids.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, InvalidValueError, UsageError } from '../errors.js';
import { requireE164 } from '../e164-arg.js';
import { explainMissingContext, parseContextFlag } from '../json-flag.js';
import { formatTime, hint, ok, orDash, printFields, printJson } from '../output.js';
import { withHint } from './call.js';
import { wholeNumber } from '../number-arg.js';

/** Flags of `vagent call place`. */
export interface CallPlaceFlags {
  agent: string;
  to: string;
  from?: string;
  dial?: boolean;
  trunk?: string;
  /** A JSON object, or `@file.json`. */
  context?: string;
  customerName?: string;
  title?: string;
  /** Whole seconds, as typed. */
  ringingTimeout?: string;
  /** Whole seconds, as typed. */
  maxDuration?: string;
  idempotencyKey?: string;
}

const CONTEXT_EXAMPLE = 'example: --context \'{"emi_amount": "12500"}\' or --context @context.json';

/**
 * The `POST /v1/calls` body for the flags, checked locally first.
 * @throws InvalidValueError (exit 1, invalid_request) for a number that is not E.164, a timer
 *   out of range or a `--context` that is not a JSON object; UsageError (exit 2) for dial-only
 *   flags without `--dial`.
 */
export function placeBody(flags: CallPlaceFlags): PlaceCallBody {
  for (const [flag, value] of [
    ['--to', flags.to],
    ['--from', flags.from],
  ] as const) {
    if (value !== undefined) requireE164(value, flag, flag.slice(2));
  }
  if (!flags.dial) {
    const dialOnly = [
      ['--trunk', flags.trunk],
      ['--ringing-timeout', flags.ringingTimeout],
      ['--max-duration', flags.maxDuration],
    ]
      .filter(([, v]) => v !== undefined)
      .map(([f]) => f);
    if (dialOnly.length > 0) throw new UsageError(`${dialOnly.join(', ')} only apply when dialling: add --dial`);
  }
  const body: PlaceCallBody = { agent_id: flags.agent, to: flags.to };
  if (flags.from !== undefined) body.from = flags.from;
  if (flags.context !== undefined) body.context = parseContextFlag(flags.context, CONTEXT_EXAMPLE);
  if (flags.customerName !== undefined) body.customer_name = flags.customerName;
  if (flags.title !== undefined) body.title = flags.title;
  if (flags.dial) body.dial = true;
  if (flags.trunk !== undefined) body.trunk_id = flags.trunk;
  const { ringing_timeout_s: ring, max_call_duration_s: max } = DIAL_LIMITS;
  if (flags.ringingTimeout !== undefined)
    body.ringing_timeout_s = wholeNumber('--ringing-timeout', 'ringing_timeout_s', flags.ringingTimeout, ring.min, ring.max);
  if (flags.maxDuration !== undefined)
    body.max_call_duration_s = wholeNumber('--max-duration', 'max_call_duration_s', flags.maxDuration, max.min, max.max);
  return body;
}

/** Hints for placement errors, by API error code; the argument is the server's message. */
const PLACE_HINTS: Record<string, (message: string) => string> = {
  telephony_not_configured: () => 'see `vagent telephony check`; or leave out --dial to prepare the call without ringing anyone',
  dial_failed: () =>
    'nothing is ringing. Check the trunk (`vagent trunk list`), the number and `vagent telephony check`, then place the call again',
  dial_outcome_unknown: (message) => {
    const id = /\bcl_\d+\b/.exec(message)?.[0] ?? 'cl_…';
    return (
      `the phone may be ringing. Look before placing it again: \`vagent call show ${id}\` (or the LiveKit dashboard); ` +
      'a new call needs a new --idempotency-key, as this one will never dial twice'
    );
  },
  caller_id_not_on_trunk: () => "--from must be one of the trunk's numbers: see `vagent trunk list`",
  trunk_not_found: () => 'see `vagent trunk list` for trunk ids',
  workflow_not_found: () => 'see `vagent agent list` for agent ids',
  not_found: () => 'calls need an agent with direction: outbound; see `vagent agent list`',
  rate_limit_exceeded: () =>
    "today's budget for this tenant is spent: see `vagent telephony check`; an operator can change it with `vagent admin tenant set NAME --budget-inr N`",
  idempotency_key_reuse: () => 'this --idempotency-key was used with other arguments; use a new key for a new call',
  idempotency_key_in_progress: () => 'a request with this --idempotency-key is still running; wait, then retry with the same key',
};

/** A placement failure with a hint where one helps; other errors pass through unchanged. */
function explainPlaceError(err: unknown, key: string): unknown {
  if (err instanceof DaemonUnreachableError) {
    return new CliError(
      err.message,
      EXIT.unreachable,
      `to retry safely, run the same command with --idempotency-key ${key}: the daemon places a call at most once per key`,
    );
  }
  if (err instanceof ApiResponseError) {
    const missing = explainMissingContext(err);
    if (missing !== err) return missing;
  }
  return withHint(err, PLACE_HINTS);
}

/**
 * `vagent call place --agent ID --to E164 [--dial] …`: prepares a call (a session of an
 * outbound agent, nothing dialled) or, with `--dial`, rings the number through LiveKit SIP.
 * @throws InvalidValueError (exit 1) for bad values, UsageError (exit 2) for flags that do not
 *   go together; CliError (exit 1 with a hint, exit 3 unreachable).
 */
export async function place(ctx: CommandContext, flags: CallPlaceFlags): Promise<void> {
  const body = placeBody(flags);
  if (flags.idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(flags.idempotencyKey)) {
    throw new InvalidValueError('--idempotency-key must be 1 to 255 printable ASCII characters', 'Idempotency-Key');
  }
  const key = flags.idempotencyKey ?? crypto.randomUUID();
  const client = await ctx.client();
  let placed: CallPlacement;
  try {
    placed = await client.placeCall(body, { idempotencyKey: key });
  } catch (err) {
    throw explainPlaceError(err, key);
  }
  if (ctx.json) return printJson(placed);
  printPlacement(placed);
}

function printPlacement(p: CallPlacement): void {
  if (p.dial_status === 'answered') ok(`${p.to} answered: call ${p.call_id}`);
  else if (p.status === 'ringing') ok(`${p.to} is ringing: call ${p.call_id}`);
  else ok(`call ${p.call_id} prepared: nothing was dialled`);
  const fields: Array<[string, string]> = [
    ['call', p.call_id],
    // The API keeps its two placement statuses (`CallPlacementSchema`); a dial that waited says it was answered.

    ['status', p.dial_status === 'answered' ? 'answered' : p.status],
    ['session', p.session_id],
    ['agent', p.agent_id],
    ['to', p.to],
    ['from', orDash(p.from)],
  ];
  if (p.status === 'ringing') {
    fields.push(['trunk', orDash(p.trunk_id)], ['room', orDash(p.room_name)], ['provider call', orDash(p.provider_call_id)]);
    if (p.answered_at) fields.push(['answered', formatTime(p.answered_at)]);
  }
  printFields(fields);
  if (p.status === 'ringing') {
    hint(`follow it: vagent call show ${p.call_id}   (vagent carries its audio in room ${p.room_name ?? '-'})`);
    hint(`hang up: vagent call hangup ${p.call_id}`);
    return;
  }
  hint(`the session is open: a media agent or your backend talks to it (POST /v1/sessions/${p.session_id}/turn);`);
  hint(`see it with \`vagent session show ${p.session_id}\`, end it with \`vagent session end ${p.session_id}\``);
  hint('to ring the phone, place the call with --dial (see `vagent telephony check`)');
}

/**
 * Ids given on the command line, checked before anything is sent: a string that is not an id of
 * its kind is refused with the code the daemon answers it with (docs/api-decisions.md "Request
 * shapes": a malformed call or session id is `session_not_found`, a malformed agent id
 * `workflow_not_found`; docs/events.md: a malformed webhook endpoint id in the path is
 * `not_found`, in a body `invalid_request`; an event id `invalid_request`), exit 1, and a message
 * that says plainly what is wrong: `"foo" is not a call id: call ids look like cl_4503599627370497`.
 */
import { ApiError, type ErrorCode } from '../../domain/errors.js';
import { EVENT_ID_PATTERN } from '../../domain/events.js';
import { ID_PATTERNS, shortId } from '../../domain/ids.js';
import { WEBHOOK_ENDPOINT_ID_PATTERN } from '../../domain/webhooks.js';

/** What one kind of id looks like, and how the daemon answers one that is not. */
interface IdKind {
  pattern: RegExp;
  /** `a call id` */
  noun: string;
  /** `call ids look like cl_4503599627370497` */
  looks: string;
  /** The API's code for a malformed id of this kind where it names a resource (a path parameter). */
  code: ErrorCode;
  /** The API's `param`. */
  param: string;
  /** Where to find a real one. */
  see: string;
}

const KINDS = {
  call: {
    pattern: ID_PATTERNS.call,
    noun: 'a call id',
    looks: 'call ids look like cl_4503599627370497',
    code: 'session_not_found',
    param: 'call_id',
    see: 'vagent call list',
  },
  session: {
    pattern: ID_PATTERNS.session,
    noun: 'a session id',
    looks: 'session ids look like se_4503599627370497',
    code: 'session_not_found',
    param: 'session_id',
    see: 'vagent session list',
  },
  agent: {
    pattern: ID_PATTERNS.agent,
    noun: 'an agent id',
    looks: 'agent ids are ag_ followed by 1–64 of a-z, 0-9 and _, such as ag_clinic_booking',
    code: 'workflow_not_found',
    param: 'agent_id',
    see: 'vagent agent list',
  },
  webhook: {
    pattern: WEBHOOK_ENDPOINT_ID_PATTERN,
    noun: 'a webhook endpoint id',
    looks: 'webhook endpoint ids are we_ followed by 20 of a-z and 2-7',
    code: 'not_found',
    param: 'webhook_endpoint_id',
    see: 'vagent webhook list',
  },
  event: {
    pattern: EVENT_ID_PATTERN,
    noun: 'an event id',
    looks: 'event ids look like evt_000000000042',
    code: 'invalid_request',
    param: 'event_id',
    see: 'vagent events list',
  },
} satisfies Record<string, IdKind>;

/** The kinds of id {@link checkId} knows. */
export type IdKindName = keyof typeof KINDS;

/** An id for a message: quoted as JSON (control characters escaped), at most 64 characters. */
const quoted = (value: string): string => JSON.stringify(shortId(value));

/**
 * `value` when it is an id of `kind`.
 * @param body the id goes in a request body (`--endpoint`): the daemon answers a malformed one
 *   `invalid_request` naming this field (`endpoint_id`), not the path parameter's code
 * @throws ApiError (exit 1) with the daemon's code and param for such an id, naming what it is not
 *   and what one looks like; printed `error: session_not_found: "foo" is not a call id: …`.
 */
export function checkId(kind: IdKindName, value: string, body?: { param: string; flag: string }): string {
  const k: IdKind = KINDS[kind];
  if (k.pattern.test(value)) return value;
  const what = body ? `${body.flag} ${quoted(value)}` : quoted(value);
  return fail(body ? 'invalid_request' : k.code, `${what} is not ${k.noun}: ${k.looks} (see ${k.see})`, body?.param ?? k.param);
}

function fail(code: ErrorCode, message: string, param: string): never {
  throw new ApiError(code, message, { param });
}

/**
 * API error codes and their HTTP statuses (docs/api-decisions.md "Errors").
 *
 * Every failure that reaches a client is an {@link ApiError}; the server maps it to
 * `{"error": {"code", "message", "param"?}}` in exactly one place, and the CLI maps the
 * code to an exit status in exactly one place.
 */

/** HTTP status for each API error code (docs/api-decisions.md "Errors"). */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  workflow_not_found: 404,
  session_not_found: 404,
  trunk_not_found: 404,
  session_already_ended: 409,
  idempotency_key_in_progress: 409,
  already_exists: 409,
  idempotency_key_reuse: 422,
  caller_id_not_on_trunk: 422,
  rate_limit_exceeded: 429,
  internal_error: 500,
  dial_failed: 502,
  /** Extension: LiveKit refused or did not answer a hang-up; nothing changed, the line may be up. */
  hangup_failed: 502,
  telephony_not_configured: 503,
  /** Extension: the daemon's media workers are not running (`GET /v1/media/*`). */
  media_unavailable: 503,
  /** Extension: LiveKit did not say whether a dial was placed; it is not retried blindly. */
  dial_outcome_unknown: 504,
} as const;

/** One of the API's error codes (the `error.code` field of an error body). */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The JSON body of every error response: `{error: {code, message, param?}}`. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; param?: string };
}

/**
 * A failure with an API error code. Thrown by services and mapped to a response by the
 * server's error handler.
 *
 * @param code    API error code; decides the HTTP status (see {@link ERROR_STATUS}).
 * @param message Human text. Must never contain credentials, phone numbers of callers or
 *                other personal data beyond what the client itself sent.
 * @param options `param` names the offending request field (`numbers[2]`, `auth`);
 *                `status` overrides the code's default (413/415 for `invalid_request`).
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly status: number;

  constructor(code: ErrorCode, message: string, options: { param?: string; status?: number } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.param = options.param;
    this.status = options.status ?? ERROR_STATUS[code];
  }

  /** The response body for this error. */
  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.param !== undefined) error.param = this.param;
    return { error };
  }
}

/** True when `value` is a known API error code. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}

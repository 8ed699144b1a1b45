/**
 * CLI failures and exit codes (README.md "Exit codes"): 0 ok, 1 API or usage error (the
 * message names the API error code), 2 bad arguments, 3 the daemon cannot be reached, 130
 * interrupted or cancelled by the operator (Ctrl-C: 128 + SIGINT's number 2, the shells' code
 * for a process ended by SIGINT), after the command wound up.
 *
 * One mistake has one exit code wherever it is caught: a value the daemon would refuse with
 * `invalid_request` (an E.164 number, a timer out of range, a `--context` that is not a JSON
 * object) exits 1 and names `invalid_request` whether vagent catches it before sending
 * ({@link InvalidValueError}) or the daemon does. Exit 2 is for a command line vagent cannot
 * act on at all: an unknown command or flag, a missing argument, flags that need each other,
 * a file or stdin it cannot read.
 *
 * The mapping from errors to exit codes lives in {@link exitCodeOf}, nowhere else; the error
 * object printed with `--json` in {@link errorObject}.
 */
import { CommanderError } from 'commander';
import { ApiResponseError, DaemonUnreachableError, MalformedApiKeyError } from '../client/index.js';
import { ApiError } from '../domain/errors.js';

/** Exit codes of every `vagent` command. */
export const EXIT = { ok: 0, error: 1, usage: 2, unreachable: 3, interrupted: 130 } as const;

/**
 * Codes of failures the CLI finds itself, beside the API's codes (docs/api-decisions.md "Errors"), in the
 * `code` of the `--json` error object: `bad_arguments` (exit 2), `cancelled` (a delete
 * question answered no, exit 1; Ctrl-C at a prompt, exit 130: {@link CancelledError}),
 * `daemon_unreachable` (exit 3), `internal_error` (a bug, exit 1), `interrupted` (Ctrl-C
 * during a chat or a simulated call, exit 130: {@link InterruptedError}), `misheard`
 * (`call simulate --strict`, exit 1), `recognition_off` (`call simulate` of a language no
 * recogniser of the daemon hears, exit 1), `test_failed` (`agent test`: a scenario failed, exit 1).
 */
export type LocalErrorCode =
  | 'bad_arguments'
  | 'cancelled'
  | 'daemon_unreachable'
  | 'internal_error'
  | 'cli_error'
  | 'interrupted'
  | 'misheard'
  | 'recognition_off'
  | 'test_failed';

/** A failure the CLI reports with a message and an exit code. */
export class CliError extends Error {
  /**
   * @param code the `code` of the `--json` error object: an API code (e.g. `unauthorized`
   *   when no key is known) or a {@link LocalErrorCode}; by default `bad_arguments` for exit 2
   *   and `cli_error` otherwise
   * @param param the flag or field at fault, as the API's `param`
   */
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
    readonly hint?: string,
    readonly code: string = exitCode === EXIT.usage ? 'bad_arguments' : 'cli_error',
    readonly param?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad command-line arguments (exit 2, code `bad_arguments`). */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, hint);
    this.name = 'UsageError';
  }
}

/** The operator cancelled a prompt (Ctrl-C or end of input at it): exit 130, code `cancelled`. */
export class CancelledError extends CliError {
  constructor(message = 'cancelled') {
    super(message, EXIT.interrupted, undefined, 'cancelled');
    this.name = 'CancelledError';
  }
}

/**
 * Ctrl-C (SIGINT) ended a command that then wound up (a chat's session ended, a simulated call
 * hung up, their summary printed): exit 130, code `interrupted`.
 */
export class InterruptedError extends CliError {
  /** @param what what the interruption ended, e.g. "the caller hung up" */
  constructor(what: string) {
    super(`interrupted (Ctrl-C): ${what}`, EXIT.interrupted, undefined, 'interrupted');
    this.name = 'InterruptedError';
  }
}

/**
 * A value the daemon would refuse with `invalid_request`, caught before anything is sent:
 * exit 1 and code `invalid_request`, as when the daemon refuses it (module comment).
 */
export class InvalidValueError extends CliError {
  /**
   * @param param the API field the flag fills (`to`, `context`, `ringing_timeout_s`)
   */
  constructor(message: string, param: string, hint?: string) {
    super(message, EXIT.error, hint, 'invalid_request', param);
    this.name = 'InvalidValueError';
  }
}

/**
 * An error the daemon answered, with a hint for people: printed as the API error it is
 * (`error: <code>: <message>`, exit 1; with `--json` the API's own error object).
 */
export class HintedApiError extends CliError {
  constructor(
    readonly api: ApiResponseError,
    hint: string,
  ) {
    const param = api.param && !api.message.startsWith(api.param) ? ` (${api.param})` : '';
    super(`${api.code}: ${api.message}${param}`, EXIT.error, hint, api.code, api.param);
    this.name = 'HintedApiError';
  }
}

/** The exit code for any thrown value. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof CommanderError) return EXIT.usage;
  if (err instanceof DaemonUnreachableError) return EXIT.unreachable;
  if (err instanceof MalformedApiKeyError) return EXIT.usage;
  if (err instanceof ApiResponseError) return EXIT.error;
  return EXIT.error;
}

/** Most characters of an error message the CLI prints (human or `--json`). */
export const MESSAGE_MAX = 2000;

/**
 * An error message cut to {@link MESSAGE_MAX} characters, `…` and its length after it: the last
 * guard against an error that quotes a huge value whole (the CLI's own messages quote values
 * through `quoted` in output.ts, which bounds them far sooner; a daemon or a library may not).
 */
export function boundedMessage(message: string): string {
  if (message.length <= MESSAGE_MAX) return message;
  return `${message.slice(0, MESSAGE_MAX)}… (${message.length} characters)`;
}

/** The API's error object (docs/api-decisions.md "Errors"): `{code, message, param?}`. */
export interface ErrorObject {
  code: string;
  message: string;
  param?: string;
}

/**
 * The API's error object (docs/api-decisions.md "Errors") for any thrown value, as `--json` prints it inside `{"error": …}`:
 * the API's own object for an API error, the same shape for a local one.
 */
export function errorObject(err: unknown): ErrorObject {
  const withParam = (code: string, message: string, param: string | undefined): ErrorObject =>
    param === undefined ? { code, message: boundedMessage(message) } : { code, message: boundedMessage(message), param };
  if (err instanceof HintedApiError) return errorObject(err.api);
  if (err instanceof ApiResponseError || err instanceof ApiError) return withParam(err.code, err.message, err.param);
  if (err instanceof CliError) return withParam(err.code, err.message, err.param);
  if (err instanceof DaemonUnreachableError) return withParam('daemon_unreachable', err.message, undefined);
  if (err instanceof MalformedApiKeyError) return withParam('bad_arguments', err.message, undefined);
  if (err instanceof CommanderError) return withParam('bad_arguments', err.message.replace(/^error: /, ''), undefined);
  return withParam('internal_error', (err as Error | undefined)?.message ?? String(err), undefined);
}

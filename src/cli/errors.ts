/**
 * CLI failures and exit codes (DESIGN.md §5 — Contract): 0 ok, 1 API or usage error (the
 * message names the API error code), 2 bad arguments, 3 the daemon cannot be reached.
 * The mapping from errors to exit codes lives in {@link exitCodeOf}, nowhere else.
 */
import { ApiResponseError, DaemonUnreachableError } from '../client/index.js';

/** Exit codes of every `vagent` command. */
export const EXIT = { ok: 0, error: 1, usage: 2, unreachable: 3 } as const;

/** A failure the CLI reports with a message and an exit code. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT.error, readonly hint?: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad command-line arguments (exit 2). */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, hint);
    this.name = 'UsageError';
  }
}

/** The exit code for any thrown value. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof DaemonUnreachableError) return EXIT.unreachable;
  if (err instanceof ApiResponseError) return EXIT.error;
  return EXIT.error;
}

/**
 * What the development fakes' command lines share (`npm run fake-livekit`, `fake-deepgram`,
 * `fake-sarvam`): their usage errors, the `export` lines they print, and stopping on a signal.
 */

/** A command-line mistake: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** `value` quoted for a POSIX shell when it needs it (the printed `export NAME=value` lines). */
export function shellQuote(value: string): string {
  return /^[\w.:/@%+=,-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * What the operator does with the printed `export` lines, said on stderr after them: a daemon
 * reads its settings at start only (README, "Settings"), so one already running keeps its old ones.
 * @param count how many `export` lines were printed
 */
export function restartNote(name: string, count: number): string {
  return (
    `[${name}] now start vagent serve in a shell with the ${count} export lines above (paste them, or eval "$(…)"); ` +
    'a vagent serve already running reads its settings only at start: stop it and start it again there\n'
  );
}

/**
 * `--port`'s value, or `fallback` when it is absent.
 * @throws UsageError unless it is a whole number 0–65535
 */
export function parsePort(raw: string | undefined, fallback: number): number {
  const port = Number(raw ?? String(fallback));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0-65535, got ${raw}`);
  return port;
}

/**
 * Closes a serving fake on SIGINT or SIGTERM, saying so on stderr as `[name] SIGNAL: closing…`.
 * @param note extra words after "closing" (e.g. how many streams were served), read at the signal
 */
export function closeOnSignals(name: string, close: () => Promise<void>, note: () => string = () => ''): void {
  const stop = (signal: string): void => {
    process.stderr.write(`[${name}] ${signal}: closing${note()}\n`);
    close().catch((err: unknown) => {
      process.stderr.write(`[${name}] close failed: ${(err as Error).message}\n`);
      process.exitCode = 1;
    });
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

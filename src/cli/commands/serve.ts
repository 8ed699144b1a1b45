/**
 * `vagent serve`.
 */
import { ConfigError, loadSettings } from '../../config/load.js';
import type { Settings } from '../../config/schema.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, UsageError } from '../errors.js';

/** Flags of `vagent serve`. */
export interface ServeFlags {
  host?: string;
  port?: string;
  stateDir?: string;
  config?: string;
}

/**
 * A failure to bind the listening socket as a message for people, or undefined for any other
 * error. `port` is the port asked for (the error's own when it names one).
 */
export function listenFailure(err: unknown, settings: Pick<Settings, 'host' | 'port'>): CliError | undefined {
  const e = err as NodeJS.ErrnoException & { port?: number };
  const port = typeof e?.port === 'number' ? e.port : settings.port;
  switch (e?.code) {
    case 'EADDRINUSE':
      return new CliError(
        `port ${port} is in use: is another vagent serve running? (--port)`,
        EXIT.error,
        `pick a free port with --port (or VAGENT_PORT), or stop the program listening on ${port} (e.g. ss -ltnp 'sport = :${port}')`,
      );
    case 'EACCES':
      return new CliError(
        `cannot listen on port ${port}: permission denied (--port)`,
        EXIT.error,
        'ports below 1024 need privileges: use a port from 1024 up (default 8787) behind a reverse proxy',
      );
    case 'EADDRNOTAVAIL':
      return new CliError(
        `cannot listen on ${settings.host}: no such address on this machine (--host)`,
        EXIT.error,
        'use 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or an address of this machine',
      );
    default:
      return undefined;
  }
}

/**
 * Loads settings and runs the daemon until SIGTERM/SIGINT.
 * @throws UsageError (exit 2) for bad settings; CliError (exit 1) when the port is in use or
 *   cannot be bound, without a stack trace.
 */
export async function serve(_ctx: CommandContext, flags: ServeFlags): Promise<void> {
  let settings;
  try {
    settings = loadSettings(flags);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const { serveUntilSignal } = await import('../../daemon/daemon.js');
  try {
    await serveUntilSignal(settings);
  } catch (err) {
    throw listenFailure(err, settings) ?? err;
  }
}

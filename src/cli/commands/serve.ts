/**
 * `vagent serve`.
 */
import { ConfigError, loadSettings } from '../../config/load.js';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';

/** Flags of `vagent serve`. */
export interface ServeFlags {
  host?: string;
  port?: string;
  stateDir?: string;
  config?: string;
}

/** Loads settings and runs the daemon until SIGTERM/SIGINT. Bad settings exit 2. */
export async function serve(_ctx: CommandContext, flags: ServeFlags): Promise<void> {
  let settings;
  try {
    settings = loadSettings(flags);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const { serveUntilSignal } = await import('../../server/daemon.js');
  await serveUntilSignal(settings);
}

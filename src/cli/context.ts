/**
 * What every command handler gets: output mode and a lazily built API client.
 */
import type { Command } from 'commander';
import { VagentClient } from '../client/index.js';
import { CliError, EXIT } from './errors.js';
import { resolveConnection, type ConnectionFlags } from './profile.js';

/** Per-invocation context of a command. */
export interface CommandContext {
  /** `--json`: print the API's response object as it is. */
  json: boolean;
  /** Global flags as given. */
  flags: ConnectionFlags;
  /**
   * An authenticated client for the resolved daemon. What is wrong is said in the order an
   * operator can fix it: an address that is not an http(s) URL (UsageError, exit 2), a daemon
   * that does not answer there (DaemonUnreachableError, exit 3), then no key (CliError
   * `unauthorized`, exit 1).
   */
  client(): Promise<VagentClient>;
}

/** Builds the context from a commander command (reads global options). */
export function contextOf(cmd: Command): CommandContext {
  const opts = cmd.optsWithGlobals<{ json?: boolean; url?: string; apiKey?: string }>();
  const flags: ConnectionFlags = {};
  if (opts.url !== undefined) flags.url = opts.url;
  if (opts.apiKey !== undefined) flags.apiKey = opts.apiKey;
  return {
    json: opts.json === true,
    flags,
    async client() {
      const { url, apiKey } = await resolveConnection(flags);
      if (!apiKey) {
        // Without a key nothing can be sent, so ask the daemon only whether it is there: a
        // login hint for an address where nothing listens would send the operator the wrong way.
        await new VagentClient({ url, retryDelaysMs: [] }).health();
        throw new CliError(
          `no API key for ${url}`,
          EXIT.error,
          'run `vagent login --url ' + url + '`, or set VAGENT_API_KEY (create a key with `vagent admin key create --tenant default`)',
          'unauthorized',
        );
      }
      return new VagentClient({ url, apiKey });
    },
  };
}

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
  /** An authenticated client for the resolved daemon. @throws CliError when no key is known. */
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
        throw new CliError(`no API key for ${url}`, EXIT.error,
          'run `vagent login --url ' + url + '`, or set VAGENT_API_KEY (create a key with `vagent admin key create --tenant default`)',
          'unauthorized');
      }
      return new VagentClient({ url, apiKey });
    },
  };
}

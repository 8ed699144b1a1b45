/**
 * `vagent login` and `vagent logout`.
 */
import { VagentClient } from '../../client/index.js';
import type { CommandContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { hint, ok, printJson } from '../output.js';
import { checkApiKey, forgetLogin, resolveUrl, saveLogin, type KeySource } from '../profile.js';
import { promptHidden, readStdin } from '../prompt.js';

/** `vagent login [--url URL] [--api-key-stdin]`: checks the key against the daemon, then saves it. */
export async function login(ctx: CommandContext, flags: { apiKeyStdin?: boolean }): Promise<void> {
  const url = await resolveUrl(ctx.flags);
  let key = ctx.flags.apiKey ?? process.env.VAGENT_API_KEY;
  let source: KeySource = ctx.flags.apiKey !== undefined ? '--api-key' : 'VAGENT_API_KEY';
  if (flags.apiKeyStdin) [key, source] = [(await readStdin()).trim(), 'stdin'];
  if (key === undefined) [key, source] = [(await promptHidden('API key: ', '--api-key-stdin')).trim(), 'the prompt'];
  if (!key) throw new UsageError('no API key given');
  const client = new VagentClient({ url, apiKey: checkApiKey(key, source) });
  const health = await client.health();
  await client.listTrunks();
  const where = await saveLogin(url, key);
  if (ctx.json) return printJson({ url, version: health.version, key_store: where.store });
  ok(`logged in to ${url} (vagent ${health.version})`);
  hint(
    where.store === 'keychain'
      ? 'API key stored in the OS keychain'
      : `API key stored in ${where.path} (mode 0600; no keychain service is running)`,
  );
}

/** `vagent logout`: forgets the stored key for the daemon URL. */
export async function logout(ctx: CommandContext): Promise<void> {
  const url = await resolveUrl(ctx.flags);
  const removed = await forgetLogin(url);
  if (ctx.json) return printJson({ url, removed });
  if (!removed) throw new CliError(`no stored API key for ${url}`);
  ok(`forgot the API key for ${url}`);
}

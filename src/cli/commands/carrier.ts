/**
 * `vagent carrier set|list|rm|token` (extension; docs/carrier-auth.md): the carrier credentials that let
 * Twilio, Plivo and Exotel stream calls to the daemon's `/v1/media/{dialect}` with their own
 * authentication, and the tenant's stream token. Secrets are read from stdin or a hidden
 * prompt, never from argv.
 */
import type { CarrierCredentialsRequest, CarrierView } from '../../client/index.js';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { dim, formatTime, hint, ok, orDash, printFields, printJson, printTable, say } from '../output.js';
import { confirmDelete, promptHidden, readStdin, type DeleteFlags } from '../prompt.js';

/** The dialects `vagent carrier` knows, as the daemon names them. */
export const DIALECTS = ['twilio', 'plivo', 'exotel'] as const;
type Dialect = (typeof DIALECTS)[number];

/** Flags of `vagent carrier set`. */
export interface CarrierSetFlags {
  accountSid?: string;
  authId?: string;
  exotelApiKey?: string;
  authTokenStdin?: boolean;
  apiTokenStdin?: boolean;
}

/** What each dialect takes: its id flag (required or not), its secret flag and names. */
const SPEC: Record<
  Dialect,
  {
    id?: { flag: keyof CarrierSetFlags; option: string; field: string; required: boolean };
    secretFlag: keyof CarrierSetFlags;
    secretField: string;
    secretName: string;
    how: string;
  }
> = {
  twilio: {
    id: { flag: 'accountSid', option: '--account-sid', field: 'account_sid', required: false },
    secretFlag: 'authTokenStdin',
    secretField: 'auth_token',
    secretName: 'Twilio auth token',
    how: 'TwiML: <Connect><Stream url="wss://YOUR-HOST/v1/media/twilio"/></Connect> (Twilio signs the upgrade with this token)',
  },
  plivo: {
    id: { flag: 'authId', option: '--auth-id', field: 'auth_id', required: true },
    secretFlag: 'authTokenStdin',
    secretField: 'auth_token',
    secretName: 'Plivo auth token',
    how: 'Plivo XML: <Stream bidirectional="true">wss://YOUR-HOST{path}</Stream> (Plivo signs the upgrade, signature V3)',
  },
  exotel: {
    id: { flag: 'exotelApiKey', option: '--exotel-api-key', field: 'api_key', required: true },
    secretFlag: 'apiTokenStdin',
    secretField: 'api_token',
    secretName: 'Exotel API token',
    how: 'Voicebot applet URL: wss://API_KEY:API_TOKEN@YOUR-HOST{path} (Exotel sends them as basic auth)',
  },
};

const ALL_ID_FLAGS = [
  ['accountSid', '--account-sid'],
  ['authId', '--auth-id'],
  ['exotelApiKey', '--exotel-api-key'],
] as const;
const ALL_SECRET_FLAGS = [
  ['authTokenStdin', '--auth-token-stdin'],
  ['apiTokenStdin', '--api-token-stdin'],
] as const;

function dialectOf(value: string): Dialect {
  if ((DIALECTS as readonly string[]).includes(value)) return value as Dialect;
  throw new UsageError(`unknown carrier "${value.slice(0, 40)}": use twilio, plivo or exotel`);
}

function showCarrier(c: CarrierView): void {
  printFields([
    ['carrier', c.dialect],
    ['credentials', c.configured ? 'stored (encrypted)' : dim('none')],
    ['hint', orDash(c.hint)],
    ['stream URL', `wss://YOUR-HOST${c.stream_url_path}`],
    ['updated', c.updated_at === null ? dim('-') : formatTime(c.updated_at)],
  ]);
}

/**
 * `vagent carrier set DIALECT`: stores the dialect's credentials; the secret comes from stdin
 * (`--auth-token-stdin`, `--api-token-stdin` for Exotel) or a hidden prompt on a terminal.
 * @throws UsageError (exit 2) for an unknown dialect, a flag of another dialect, or a
 *   missing Plivo `--auth-id` / Exotel `--exotel-api-key`; nothing is sent then.
 */
export async function set(ctx: CommandContext, dialectArg: string, flags: CarrierSetFlags): Promise<void> {
  const dialect = dialectOf(dialectArg);
  const spec = SPEC[dialect];
  for (const [flag, option] of ALL_ID_FLAGS) {
    if (flags[flag] !== undefined && spec.id?.flag !== flag)
      throw new UsageError(`${option} is not for ${dialect}${spec.id ? `; it takes ${spec.id.option}` : ''}`);
  }
  for (const [flag, option] of ALL_SECRET_FLAGS) {
    if (flags[flag] && spec.secretFlag !== flag)
      throw new UsageError(
        `${option} is not for ${dialect}; use ${spec.secretFlag === 'authTokenStdin' ? '--auth-token-stdin' : '--api-token-stdin'}`,
      );
  }
  const body: Record<string, unknown> = {};
  if (spec.id) {
    const value = flags[spec.id.flag];
    if (value === undefined && spec.id.required) throw new UsageError(`${dialect} needs ${spec.id.option}`);
    if (value !== undefined) body[spec.id.field] = value;
  }
  const secretFlag = spec.secretFlag === 'authTokenStdin' ? '--auth-token-stdin' : '--api-token-stdin';
  body[spec.secretField] = flags[spec.secretFlag] ? await readStdin() : await promptHidden(`${spec.secretName}: `, secretFlag);
  // `body` holds the dialect's fields, named by SPEC; the daemon checks them against its schema.
  const view = await (await ctx.client()).setCarrier(dialect, body as CarrierCredentialsRequest);
  if (ctx.json) return printJson(view);
  ok(`${dialect} credentials stored (encrypted; never shown again)`);
  showCarrier(view);
  hint(spec.how.replace('{path}', view.stream_url_path));
}

/** `vagent carrier list`: every dialect, configured or not, and whether a stream token exists. */
export async function list(ctx: CommandContext): Promise<void> {
  const res = await (await ctx.client()).listCarriers();
  if (ctx.json) return printJson(res);
  await printTable(
    res.data,
    [
      { header: 'CARRIER', cell: (c) => c.dialect },
      { header: 'CREDENTIALS', cell: (c) => (c.configured ? 'stored' : dim('none')) },
      { header: 'HINT', cell: (c) => orDash(c.hint) },
      { header: 'STREAM URL PATH', cell: (c) => c.stream_url_path },
      { header: 'UPDATED', cell: (c) => (c.updated_at === null ? dim('-') : formatTime(c.updated_at)) },
    ],
    '',
  );
  const t = res.stream_token;
  say(
    t.configured && t.created_at !== null
      ? `stream token: set ${formatTime(t.created_at)} (a new one: vagent carrier token)`
      : `stream token: ${dim('none')} (make one: vagent carrier token)`,
  );
}

/**
 * `vagent carrier rm DIALECT [--yes]`: forgets the dialect's credentials (asks first on a
 * terminal, see {@link confirmDelete}).
 * @throws UsageError for an unknown dialect, or without a terminal and without `--yes`.
 */
export async function rm(ctx: CommandContext, dialectArg: string, flags: DeleteFlags = {}): Promise<void> {
  const dialect = dialectOf(dialectArg);
  await confirmDelete(`the ${dialect} credentials`, flags.yes);
  const res = await (await ctx.client()).deleteCarrier(dialect);
  if (ctx.json) return printJson(res);
  ok(`${dialect} credentials removed: ${dialect} streams now need an API key or the stream token`);
}

/**
 * `vagent carrier token`: makes a new stream token and prints it once on stdout (alone, for
 * `$(…)`); the previous token stops working at once.
 */
export async function token(ctx: CommandContext): Promise<void> {
  const res = await (await ctx.client()).rotateStreamToken();
  if (ctx.json) return printJson(res);
  say(res.stream_token);
  hint('Stream token for this tenant, shown only this once (any earlier token no longer works).');
  hint('Use it: send it as the custom parameter stream_token of the stream, e.g. Twilio <Parameter name="stream_token" value="vst_…"/>.');
}

/**
 * `vagent telephony check` and `vagent carrier …`: the daemon's LiveKit connection, and the
 * credentials and stream token carriers' streaming calls authenticate with.
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { Argument, type Command } from 'commander';
import { action, examples, yesOption } from '../command-kit.js';

const telephonyCmd = () => import('../commands/telephony.js');
const carrierCmd = () => import('../commands/carrier.js');

/** Declares the `telephony` and `carrier` command groups on `program`. */
export function registerTelephonyCommands(program: Command): void {
  const telephony = program.command('telephony').description("the daemon's LiveKit connection (phone calls in and out)");
  telephony
    .command('check')
    .description("check LiveKit settings with one authenticated request; inbound event counts and today's budget")
    .addHelpText(
      'after',
      `
Exit code 1 when the check fails; the report says what to change on the daemon (LIVEKIT_URL,
LIVEKIT_API_KEY, LIVEKIT_API_SECRET for vagent serve, then a restart).

Examples:
  $ vagent telephony check
  $ vagent telephony check --json | jq .problem`,
    )
    .action(action(telephonyCmd, (m) => m.check));

  const carrier = program
    .command('carrier')
    .description('carrier credentials and the stream token: Twilio, Plivo and Exotel streaming calls to vagent');
  const dialectArg = () => new Argument('<carrier>', 'the carrier').choices(['twilio', 'plivo', 'exotel']);
  carrier
    .command('set')
    .addArgument(dialectArg())
    .description("store a carrier's credentials, so its streams to /v1/media/<carrier> authenticate the carrier's own way")
    .option('--account-sid <sid>', 'twilio: the Account SID (AC…), optional, shown as a hint')
    .option('--auth-id <id>', 'plivo: the Auth ID (MA… or SA…), required')
    .option('--exotel-api-key <key>', "exotel: the Exotel API key, required (--api-key is vagent's own key)")
    .option('--auth-token-stdin', 'twilio, plivo: read the auth token from stdin (never pass it as an argument)')
    .option('--api-token-stdin', 'exotel: read the API token from stdin (never pass it as an argument)')
    .addHelpText(
      'after',
      `
Without a --…-stdin flag the secret is asked for on the terminal, hidden. The daemon keeps it
encrypted and never shows it again; list shows a hint (the end of the SID, Auth ID or key).
How each carrier then proves itself on the stream's upgrade:
  twilio  X-Twilio-Signature (the auth token signs the <Stream url>); tenant default only, as
          <Stream url> takes no ?tenant=: other tenants use the stream token (vagent carrier token)
  plivo   X-Plivo-Signature-V3 (the auth token signs the stream URL and a nonce)
  exotel  basic auth: give the Voicebot applet wss://API_KEY:API_TOKEN@YOUR-HOST/v1/media/exotel
Tenants other than default add ?tenant=NAME to the Plivo and Exotel stream URLs (see list).

Examples:
  $ vagent carrier set plivo --auth-id MAXXXXXXXXXXXXXXXXXX          # asks for the auth token
  $ printf %s "$TWILIO_AUTH_TOKEN" | vagent carrier set twilio --account-sid AC0123456789abcdef0123456789abcdef --auth-token-stdin
  $ printf %s "$EXOTEL_API_TOKEN" | vagent carrier set exotel --exotel-api-key "$EXOTEL_API_KEY" --api-token-stdin --json`,
    )
    .action(action(carrierCmd, (m) => m.set));
  examples(
    carrier
      .command('list')
      .alias('ls')
      .description('list each carrier (credentials stored or not, hint, stream URL path) and the stream token state'),
    'vagent carrier list',
    "vagent carrier list --json | jq -r '.data[] | select(.configured) | .dialect'",
  ).action(action(carrierCmd, (m) => m.list));
  examples(
    yesOption(
      carrier
        .command('rm')
        .alias('remove')
        .addArgument(dialectArg())
        .description("forget a carrier's credentials (its streams then need an API key or the stream token)"),
    ),
    'vagent carrier rm plivo',
    'vagent carrier rm exotel --yes --json',
  ).action(action(carrierCmd, (m) => m.rm));
  carrier
    .command('token')
    .description('make a new stream token, printed once; the previous one stops working')
    .addHelpText(
      'after',
      `
A stream token authenticates a carrier stream for this tenant when the carrier cannot sign or
send an API key: pass it as the custom parameter stream_token of the stream's start event —
Twilio <Parameter name="stream_token" value="vst_…"/>, Plivo extraHeaders "stream_token=vst_…",
Exotel a stream_token URL parameter. Only its hash is stored: keep it where your carrier
settings live. Running this again replaces it (the old one stops working at once).

Examples:
  $ vagent carrier token
  $ STREAM_TOKEN=$(vagent carrier token)
  $ vagent carrier token --json | jq -r .stream_token`,
    )
    .action(action(carrierCmd, (m) => m.token));
}

/**
 * `vagent`: the operator's CLI and the daemon's entry point (DESIGN.md §5).
 *
 * This file only declares commands; each action imports its handler lazily so that
 * `vagent trunk list` never loads fastify, SQLite or the table renderer it does not use.
 */
import { Argument, Command, CommanderError, Option } from 'commander';
import { action, adminOptions, collect, examples, yesOption } from './command-kit.js';
import { EXIT, exitCodeOf } from './errors.js';
import { printError } from './output.js';
import { versionLine } from '../version.js';

const trunkCmd = () => import('./commands/trunk.js');
const numberCmd = () => import('./commands/number.js');
const adminCmd = () => import('./commands/admin.js');
const adminCacheCmd = () => import('./commands/admin-cache.js');
const adminDbCmd = () => import('./commands/admin-db.js');
const authCmd = () => import('./commands/session-auth.js');
const serveCmd = () => import('./commands/serve.js');
const agentCmd = () => import('./commands/agent.js');
const chatCmd = () => import('./commands/chat.js');
const sessionCmd = () => import('./commands/session.js');
const callCmd = () => import('./commands/call.js');
const callSimulateCmd = () => import('./commands/call-simulate.js');
const telephonyCmd = () => import('./commands/telephony.js');
const carrierCmd = () => import('./commands/carrier.js');

/** Builds the commander program. */
export function buildProgram(): Command {
  const program = new Command('vagent')
    .description('Self-hosted voice agents: SIP trunks, phone numbers (DIDs), agent workflows and calls.')
    .addOption(new Option('-v, --version', 'print the version of vagent, Node.js and the commit, then exit'))
    .option('--url <url>', 'daemon address (default: $VAGENT_URL, the login profile, or http://127.0.0.1:8787)')
    .option('--api-key <key>', 'API key (default: $VAGENT_API_KEY or the key saved by `vagent login`)')
    .option('--json', 'print the API response object as JSON')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .addHelpText(
      'after',
      `
Quick start:
  $ vagent serve                                   # daemon on http://127.0.0.1:8787
  $ vagent admin key create --tenant default       # in another shell: prints an API key once
  $ vagent login --url http://127.0.0.1:8787       # paste the key (or pipe it with --api-key-stdin)
  $ vagent trunk add --address sip.example-carrier.in --number +912240001234 --username acme --password-stdin
  $ vagent number add +918047001234 --label "Bengaluru support"
  $ vagent number bind +918047001234 ag_clinic_booking
  $ vagent agent apply -f config/agents/
  $ vagent chat ag_clinic_booking
  $ vagent telephony check                         # LiveKit settings of the daemon
  $ vagent call place --agent ag_emi_reminder --to +919876543210 --dial --customer-name "Ravi Kumar" --context @ravi.json

Exit codes: 0 ok; 1 API or usage error: the message names the error code, and a value the
daemon would refuse (e.g. a number that is not E.164) is invalid_request, exit 1, whether vagent
or the daemon catches it; 2 bad arguments (unknown command or flag, a missing argument, flags
that need each other, a --url that is not an http(s) URL); 3 the daemon cannot be reached;
130 interrupted (Ctrl-C at a prompt).
With --json, errors are one JSON line on stderr: {"error": {"code", "message", "param"?}}.`,
    );

  program
    .command('serve')
    .description('run the daemon: serves the /v1 API from a state directory')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1; env VAGENT_HOST)')
    .option('--port <port>', 'TCP port (default 8787; env VAGENT_PORT)')
    .option('--state-dir <dir>', 'state directory (env VAGENT_STATE_DIR; default ~/.local/share/vagent)')
    .option('--config <file>', 'settings file, YAML or JSON (env VAGENT_CONFIG); see config/vagent.example.yaml')
    .addHelpText(
      'after',
      `
Settings: flags > environment (VAGENT_HOST, VAGENT_PORT, VAGENT_STATE_DIR, VAGENT_AUTH_MODE,
VAGENT_MASTER_KEY, VAGENT_TENANT_DAILY_BUDGET_INR, VAGENT_TIMEZONE, VAGENT_LOG_LEVEL, …) > config file > defaults.
Logs are JSON lines on stdout; hints for people on stderr. SIGTERM/SIGINT drain in-flight requests.

Examples:
  $ vagent serve
  $ vagent serve --port 9000 --state-dir /var/lib/vagent
  $ VAGENT_AUTH_MODE=enforce vagent serve --config /etc/vagent/vagent.yaml`,
    )
    .action(action(serveCmd, (m) => m.serve));

  program
    .command('login')
    .description('save the daemon address and an API key for later commands')
    .option('--api-key-stdin', 'read the API key from stdin instead of prompting')
    .addHelpText(
      'after',
      `
The key is checked against the daemon, then kept in the OS keychain, or in
~/.config/vagent/credentials.json (mode 0600) where no keychain service runs.

Examples:
  $ vagent login --url http://127.0.0.1:8787
  $ vagent admin key create --tenant default | vagent login --url http://127.0.0.1:8787 --api-key-stdin`,
    )
    .action(action(authCmd, (m) => m.login));

  examples(
    program.command('logout').description('forget the API key saved for the daemon address'),
    'vagent logout',
    'vagent logout --url https://vagent.example.in',
  ).action(action(authCmd, (m) => m.logout));

  const trunk = program.command('trunk').description('SIP trunks: your carrier connections');
  trunk
    .command('add')
    .description('register a SIP trunk')
    .requiredOption('--address <host>', 'carrier SIP host, optionally with :port (e.g. sip.example-carrier.in)')
    .option('--name <name>', 'a name for people')
    .option('--number <e164>', 'caller-ID number the trunk may present (repeat for more)', collect)
    .option('--provider-trunk-id <id>', 'trunk already registered with the telephony provider (LiveKit ST_…)')
    .option('--username <user>', 'SIP digest username; the password is read from stdin or a hidden prompt')
    .option('--password-stdin', 'read the SIP password from stdin (never pass it as an argument)')
    .addHelpText(
      'after',
      `
Examples:
  $ vagent trunk add --address sip.example-carrier.in --name "Mumbai PRI" --number +912240001234 --number +912240001235
  $ printf %s "$SIP_PASSWORD" | vagent trunk add --address 203.0.113.10:5060 --username acme --password-stdin
  $ vagent trunk add --address sip.example-carrier.in --provider-trunk-id ST_a1b2c3d4`,
    )
    .action(action(trunkCmd, (m) => m.add));
  examples(
    trunk.command('list').alias('ls').description('list trunks, oldest first'),
    'vagent trunk list',
    'vagent trunk list --json | jq -r \'.data[] | select(.address == "sip.example-carrier.in") | .id\'',
  ).action(action(trunkCmd, (m) => m.list));
  examples(
    trunk.command('show').argument('<trunk-id>', 'tk_… id').description('show one trunk'),
    'vagent trunk show tk_3x7kq2m4n5p6r7s8t9va',
    'vagent trunk show tk_3x7kq2m4n5p6r7s8t9va --json',
  ).action(action(trunkCmd, (m) => m.show));
  examples(
    yesOption(
      trunk
        .command('rm')
        .alias('remove')
        .argument('<trunk-id>', 'tk_… id')
        .description(
          'delete a trunk; the numbers on it, named first, keep their record without a trunk (a trunk added again does not re-attach them)',
        ),
    ),
    'vagent trunk rm tk_3x7kq2m4n5p6r7s8t9va',
    'vagent trunk rm tk_3x7kq2m4n5p6r7s8t9va --yes    # in a script: no question',
  ).action(action(trunkCmd, (m) => m.rm));

  const number = program.command('number').description('phone numbers (DIDs) you hold with a carrier');
  number
    .command('add')
    .argument('<number>', 'E.164 number, e.g. +918047001234')
    .description('register a number (records it only: nothing is bought)')
    .option('--label <text>', 'a label for people')
    .option('--trunk <trunk-id>', 'the trunk the number arrives on')
    .option('--agent <agent-id>', 'the agent answering inbound calls (ag_…)')
    .addHelpText(
      'after',
      `
Examples:
  $ vagent number add +918047001234 --label "Bengaluru support" --trunk tk_…
  $ vagent number add +911140001234 --agent ag_clinic_booking`,
    )
    .action(action(numberCmd, (m) => m.add));
  examples(
    number.command('list').alias('ls').description('list numbers, sorted by number'),
    'vagent number list',
    "vagent number list --json | jq -r '.data[] | select(.agent_id == null) | .number'",
  ).action(action(numberCmd, (m) => m.list));
  number
    .command('bind')
    .argument('<number>', 'E.164 number')
    .argument('<agent-id>', 'agent id, e.g. ag_clinic_booking')
    .description('choose the agent that answers inbound calls on a number')
    .addHelpText(
      'after',
      '\nExamples:\n  $ vagent number bind +918047001234 ag_clinic_booking\n  $ vagent number bind +911140001234 ag_clinic_booking --json',
    )
    .action(action(numberCmd, (m) => m.bind));
  examples(
    yesOption(
      number
        .command('rm')
        .alias('remove')
        .argument('<number>', 'E.164 number')
        .description("delete a number's record and binding (the carrier's number is untouched)"),
    ),
    'vagent number rm +918047001234',
    'vagent number rm +918047001234 --yes --json',
  ).action(action(numberCmd, (m) => m.rm));

  const agent = program.command('agent').description('agent workflows: what an agent says, asks and captures (YAML or JSON files)');
  agent
    .command('apply')
    .description('create or update agents from workflow files (each is checked locally first)')
    .requiredOption('-f, --file <path>', 'a .yaml, .yml or .json file, or a directory of them (repeat for more)', collect)
    .option('--no-wait', "return without waiting for the agent's audio to be pre-synthesised")
    .option('--dry-run', 'check the files only; send nothing')
    .addHelpText(
      'after',
      `
A file with problems is not sent; each problem is printed as FILE:LINE:COL: field: message
(e.g. ag_clinic_booking.yaml:31:30: steps[2].capture.type: Invalid option …), and the exit
code is 1. config/agents/ holds four commented examples of the format (docs/agents.md).

Examples:
  $ vagent agent apply -f config/agents/ag_clinic_booking.yaml
  $ vagent agent apply -f config/agents/
  $ vagent agent apply -f agents/ --dry-run
  $ vagent agent apply -f ag_emi_reminder.yaml -f ag_delivery_confirmation.yaml --no-wait --json`,
    )
    .action(action(agentCmd, (m) => m.apply));
  examples(
    agent.command('list').alias('ls').description('list agents, sorted by id'),
    'vagent agent list',
    'vagent agent list --json | jq -r \'.data[] | select(.direction == "outbound") | .id\'',
  ).action(action(agentCmd, (m) => m.list));
  examples(
    agent
      .command('show')
      .argument('<agent-id>', 'ag_… id')
      .description('show an agent and its steps')
      .option('--yaml', 'print the stored definition as YAML (to edit and apply again)'),
    'vagent agent show ag_clinic_booking',
    'vagent agent show ag_clinic_booking --yaml > ag_clinic_booking.yaml',
    'vagent agent show ag_clinic_booking --json',
  ).action(action(agentCmd, (m) => m.show));
  examples(
    yesOption(
      agent
        .command('rm')
        .alias('remove')
        .argument('<agent-id>', 'ag_… id')
        .description('delete an agent (numbers bound to it keep their binding)'),
    ),
    'vagent agent rm ag_clinic_booking',
    'vagent agent rm ag_clinic_booking --yes',
  ).action(action(agentCmd, (m) => m.rm));

  program
    .command('chat')
    .argument('<agent-id>', 'the agent to talk to, e.g. ag_clinic_booking')
    .description('talk to an agent in text: one line per caller turn')
    .option('--context <json>', "a JSON object for the agent's templates ({{context.…}})")
    .option('--customer-name <name>', "the caller's name ({{customer_name}})")
    .option('--customer-phone <e164>', "the caller's number, E.164")
    .option('--now <iso>', 'reference time for relative dates ("tomorrow"); sets context.now')
    .option('--title <text>', 'a title for the session')
    .addHelpText(
      'after',
      `
On a terminal: an interactive prompt. Commands: /end (or Ctrl-D) ends the session and prints
the summary, /state shows step progress, /play plays the last reply (aplay, paplay, afplay,
play or ffplay; without one, or when it fails, its URL is printed), /help.
When the agent ends the call (its closing line, then its close_grace_ms with no new line, or
a line heard in that window), the chat prints "the agent ended the call" and the summary, exit 0.
Ctrl-C ends the session too and prints the summary, then exits 130.
With stdin not a terminal: one turn per non-empty line; at EOF the session ends.
With --json: JSON Lines: the open response, one turn result per line, then the end result.

Examples:
  $ vagent chat ag_clinic_booking
  $ vagent chat ag_clinic_booking --now 2025-11-13T10:00:00+05:30 < turns.txt
  $ printf 'Priya Sharma\\nyes\\ntomorrow\\n' | vagent chat ag_clinic_booking --json | jq .text
  $ vagent chat ag_delivery_confirmation --customer-name "Rahul Verma" --customer-phone +919876543210 \\
      --context '{"seller_name": "ShopKart", "delivery_date": "tomorrow, the 14th"}'`,
    )
    .action(action(chatCmd, (m) => m.chat));

  const session = program.command('session').description('conversation sessions (opened by `vagent chat`, calls or the API)');
  examples(
    session
      .command('list')
      .alias('ls')
      .description('list sessions, newest first: agent, status and outcome, turns, cost')
      .option('--limit <n>', 'sessions per page, 1–100 (default 20)')
      .option('--cursor <cursor>', 'start after this next_cursor of an earlier page'),
    'vagent session list',
    'vagent session list --limit 100 --json | jq -r \'.data[] | select(.status == "open") | .session_id\'',
  ).action(action(sessionCmd, (m) => m.list));
  examples(
    session
      .command('show')
      .argument('<session-id>', 'se_… id')
      .description('agent, status and outcome, each step with its captured value, the turns, costs, cache hits and latency'),
    'vagent session show se_4503599627370497',
    'vagent session show se_4503599627370497 --json | jq .total_cost_inr',
  ).action(action(sessionCmd, (m) => m.show));
  examples(
    session.command('end').argument('<session-id>', 'se_… id').description('end a session and print its summary'),
    'vagent session end se_4503599627370497',
    'vagent session end se_4503599627370497 --json | jq .summary.extracted',
  ).action(action(sessionCmd, (m) => m.end));

  const call = program.command('call').description("phone calls: prepare or dial an outbound agent's call, follow it");
  call
    .command('place')
    .description('prepare a call (a session of an outbound agent; nothing rings), or ring the number with --dial')
    .requiredOption('--agent <agent-id>', 'an outbound agent, e.g. ag_emi_reminder')
    .requiredOption('--to <e164>', 'the number to call, E.164, e.g. +919876543210')
    .option('--from <e164>', "caller ID to present; with --dial it must be one of the trunk's numbers")
    .option('--dial', 'ring the number now through LiveKit SIP (needs telephony: see `vagent telephony check`)')
    .option('--trunk <trunk-id>', 'the trunk to dial out on (tk_…); may be left out when there is only one')
    .option('--context <json>', "a JSON object for the agent's templates (its required_context), or @file.json to read it from a file")
    .option('--customer-name <name>', "the callee's name ({{customer_name}})")
    .option('--title <text>', "a title for the call's session")
    .option('--ringing-timeout <s>', 'with --dial: seconds to let it ring (5–120, default 30)')
    .option('--max-duration <s>', 'with --dial: longest call in seconds (10–21600, default 1800)')
    .option('--idempotency-key <key>', 'retry-safe key: the same key never places a second call (default: a random one per run)')
    .addHelpText(
      'after',
      `
Without --dial the call is only prepared: its session opens and waits for a media agent or
your backend to drive it (POST /v1/sessions/se_…/turn); follow it with \`vagent session show\`.
With --dial, vagent asks LiveKit to ring the number, joins the call's room and prints its name.
A request lost on the way is retried with the same Idempotency-Key, so one command never
dials twice; dial_outcome_unknown means LiveKit did not say whether the phone rang, and that
key will not dial again: check \`vagent call show cl_…\` before placing a new call.

Examples:
  $ vagent call place --agent ag_emi_reminder --to +919876543210 --customer-name "Ravi Kumar" \\
      --context '{"emi_amount": "12500", "due_date": "the 5th", "loan_last4": "4321"}'
  $ vagent call place --agent ag_delivery_confirmation --to +918123456789 --from +912240001234 --dial \\
      --customer-name "Asha Rao" --context @order.json --trunk tk_3x7kq2m4n5p6r7s8t9va --ringing-timeout 25
  $ vagent call place --agent ag_emi_reminder_hi --to +919876543210 --dial --customer-name "Ravi Kumar" --context @ravi.json \\
      --idempotency-key emi-2025-11-ravi --json | jq -r .call_id`,
    )
    .action(action(callCmd, (m) => m.place));
  examples(
    call.command('show').argument('<call-id>', 'cl_… id').description('status, dial status, numbers, room, duration and cost of a call'),
    'vagent call show cl_4503599627370497',
    'vagent call show cl_4503599627370497 --json | jq .dial_status',
  ).action(action(callCmd, (m) => m.show));
  examples(
    call
      .command('list')
      .alias('ls')
      .description('list calls, newest first')
      .option('--status <status>', 'in_progress or completed')
      .option('--source <source>', 'phone or simulator (calls made by vagent call simulate, marked sim after DIR)')
      .option('--limit <n>', 'calls per page, 1–100 (default 20; 100 with --all)')
      .option('--cursor <cursor>', 'start after this next_cursor of an earlier page')
      .option('--all', 'follow next_cursor to list every call'),
    'vagent call list',
    'vagent call list --status in_progress',
    'vagent call list --source phone',
    'vagent call list --all --json | jq -r \'.data[] | select(.dial_status == "failed") | .call_id\'',
  ).action(action(callCmd, (m) => m.list));
  examples(
    call
      .command('hangup')
      .argument('<call-id>', 'cl_… id')
      .description('hang up a call: its line through LiveKit, then its session (a line already gone is fine)')
      .option('--idempotency-key <key>', 'retry-safe key: a retry with it replays the first answer (default: a random one per run)'),
    'vagent call hangup cl_4503599627370497',
    'vagent call hangup cl_4503599627370497 --json | jq .line',
  ).action(action(callCmd, (m) => m.hangup));

  // --say, --wav and --dtmf fill one list, so the caller's steps keep the order they were typed in.
  const callerLines: Array<{ kind: 'say' | 'wav' | 'dtmf'; value: string }> = [];
  const callerLine = (kind: 'say' | 'wav' | 'dtmf') => (value: string) => {
    callerLines.push({ kind, value });
    return callerLines;
  };
  call
    .command('simulate')
    .argument('<agent-id>', 'the agent to call, e.g. ag_clinic_booking')
    .description('talk to an agent by voice without a phone: play a carrier stream into the daemon and print the call')
    .option('--say <text>', "a caller line, spoken with the embedded voice in the agent's language (repeat, in order)", callerLine('say'))
    .option('--wav <file>', 'a caller line recorded in a WAV file (repeat; mixes with --say in the order given)', callerLine('wav'))
    .addOption(
      new Option('--transport <carrier>', 'the carrier protocol to speak').choices(['twilio', 'exotel', 'plivo']).default('exotel'),
    )
    .addOption(
      new Option(
        '--sample-rate <hz>',
        "the stream's audio rate: 16000 (exotel, plivo: linear PCM; the default there) or 8000 (twilio: μ-law, its only rate)",
      ).choices(['8000', '16000']),
    )
    .option('--barge-in', "start each line and key entry 600 ms into the agent's reply, over it")
    .option(
      '--dtmf <keys>',
      'keys the caller presses once the reply before has played (with --barge-in, over it), e.g. 9876543210# (repeat; in order with the lines)',
      callerLine('dtmf'),
    )
    .option('--to <e164>', 'the called number, E.164 (default +919876543210)')
    .option('--from <e164>', "the caller's number, E.164")
    .option('--context <json>', 'outbound agents: a JSON object for their templates (required_context), or @file.json')
    .option('--customer-name <name>', "outbound agents: the callee's name ({{customer_name}})")
    .option('--timeout-s <s>', 'hang up after this many seconds if the agent has not (5–3600, default 180)')
    .option('--strict', 'exit 1 when the recogniser misheard any --say line (the error names the turns)')
    .addHelpText(
      'after',
      `
The daemon must be running (\`vagent serve\`). An outbound agent's call is prepared first
(POST /v1/calls without dial, as \`vagent call place\` does) and the stream names it with the
custom parameter call_id; an inbound agent is named with agent_id. The caller's audio goes to
GET /v1/media/<carrier> at real-time pacing, in that carrier's own frames (Twilio and Plivo:
20 ms of 8 kHz mu-law; Exotel: 100 ms of 8 kHz 16-bit PCM). Each line is spoken once the
agent's reply has finished playing, or with --barge-in over it; the lines also travel as the
custom parameter vagent_fake_transcripts, which a daemon with the fake recogniser "hears".

As the call goes the command prints each line, what the recogniser heard and the agent's
reply, the time from the end of each line to the first reply audio, barge-ins, keys and the
hang-up; then the session's outcome, extracted values and costs (STT included). --json prints
one JSON object per line: {"event": "line_start" | "reply_start" | "turn" | "clear" | … }, the
last one {"event": "summary", …}.

Each turn is paired with the caller's line it answers: a "turn" event carries "said" (the --say
text, the --wav file name, the --dtmf keys) and "match": true when the recogniser heard the
--say line as said, once both are read as the slot extractors read them ("five p m" and "5 pm"
are alike), false when it misheard it (marked "heard: … ≠ said …"), null when there is nothing
to compare (a WAV, keys). The summary counts "mismatches"; with --strict any mismatch exits 1,
naming the turns. Ctrl-C hangs up, prints the summary and exits 130.

Examples:
  $ vagent call simulate ag_clinic_booking --say "My name is Priya Sharma" --say "tomorrow at 5 pm" --say "yes"
  $ vagent call simulate ag_clinic_booking --wav name.wav --say "tomorrow at 5 pm" --transport exotel
  $ vagent call simulate ag_emi_reminder --customer-name "Ravi Kumar" --context @ravi.json --say "I will pay on Friday" --barge-in
  $ vagent call simulate ag_clinic_booking --say "Priya Sharma" --say yes --say tomorrow --say yes --say "5 pm" --say yes \\
      --dtmf 9876543210# --say yes --json | jq -c 'select(.event == "reply_start")'`,
    )
    .action(action(callSimulateCmd, (m) => m.simulate));

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

  const admin = program.command('admin').description('local administration of a state dir (works while the daemon runs)');
  const tenant = admin.command('tenant').description('tenants');
  adminOptions(
    examples(
      tenant.command('create').argument('<name>', 'lowercase slug, e.g. acme-collections').description('create a tenant'),
      'vagent admin tenant create acme-collections',
      'vagent admin tenant create sunrise-clinic --state-dir /var/lib/vagent',
    ),
  ).action(action(adminCmd, (m) => m.tenantCreate));
  adminOptions(
    tenant
      .command('set')
      .argument('<name>', 'tenant name, e.g. acme-collections')
      .description("set a tenant's daily budget, retention and inbound routing webhook")
      .option('--budget-inr <inr>', 'daily budget in rupees; 0 = no budget for this tenant; "default" = the instance setting applies')
      .option(
        '--retention-days <days>',
        'days its sessions, calls and audit events are kept; 0 = for ever; "default" = the instance\'s retention_days',
      )
      .option('--inbound-webhook <url>', 'https URL asked which agent answers an inbound call; "none" removes it and its secret')
      .option('--webhook-secret-stdin', 'read the webhook signing secret from stdin (default: generate one and print it once)')
      .addHelpText(
        'after',
        `
The webhook receives signed JSON: header vagent-signature: t=<unix seconds>,v1=<hex HMAC-SHA256
(secret, "<t>.<raw body>")>. A generated secret (whsec_…) is printed only by this command.
Plain http and private addresses are refused unless VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP /
VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE allow them.

Examples:
  $ vagent admin tenant set acme-collections --budget-inr 500
  $ vagent admin tenant set acme-collections --retention-days 90
  $ vagent admin tenant set acme-collections --inbound-webhook https://crm.acme.in/vagent/route
  $ printf %s "$ROUTING_SECRET" | vagent admin tenant set acme-collections --inbound-webhook https://crm.acme.in/vagent/route --webhook-secret-stdin
  $ vagent admin tenant set acme-collections --budget-inr default --inbound-webhook none --json`,
      ),
  ).action(action(adminCmd, (m) => m.tenantSet));
  adminOptions(
    examples(
      tenant.command('show').argument('<name>', 'tenant name').description("show a tenant's budget and webhook (never its secret)"),
      'vagent admin tenant show acme-collections',
      'vagent admin tenant show default --json',
    ),
  ).action(action(adminCmd, (m) => m.tenantShow));
  adminOptions(
    examples(tenant.command('list').alias('ls').description('list tenants'), 'vagent admin tenant list', 'vagent admin tenant list --json'),
  ).action(action(adminCmd, (m) => m.tenantList));
  const key = admin.command('key').description('API keys');
  adminOptions(
    key
      .command('create')
      .description('issue an API key (printed once on stdout)')
      .addOption(new Option('--tenant <name>', 'tenant the key acts for').default('default'))
      .addHelpText(
        'after',
        '\nExamples:\n  $ vagent admin key create --tenant default\n  $ export VAGENT_API_KEY=$(vagent admin key create --tenant acme-collections)',
      ),
  ).action(action(adminCmd, (m) => m.keyCreate));
  adminOptions(
    examples(
      key
        .command('list')
        .alias('ls')
        .description('list API keys (ids and hints, never secrets)')
        .option('--tenant <name>', 'only this tenant'),
      'vagent admin key list',
      'vagent admin key list --tenant acme-collections',
    ),
  ).action(action(adminCmd, (m) => m.keyList));
  adminOptions(
    examples(
      key.command('revoke').argument('<key-id>', 'key_… id from `vagent admin key list`').description('revoke an API key'),
      'vagent admin key revoke key_2m4n5p6r7s8t',
    ),
  ).action(action(adminCmd, (m) => m.keyRevoke));
  adminOptions(
    admin
      .command('audit')
      .description('cross-tenant accesses recorded in auth_mode audit')
      .option('--tenant <name>', 'only events where this tenant is caller or owner')
      .option('--limit <n>', 'most recent N events (default 50)')
      .addHelpText('after', '\nExamples:\n  $ vagent admin audit\n  $ vagent admin audit --tenant acme-collections --limit 200 --json'),
  ).action(action(adminCmd, (m) => m.audit));
  const cache = admin.command('cache').description('the audio cache: static clips kept, dynamic clips bounded by a cap');
  adminOptions(
    cache
      .command('stats')
      .description('clips and bytes by class, the cap and where it comes from, bytes over it')
      .addHelpText(
        'after',
        `
Static clips are the agents' pre-synthesised texts (openings, questions, FAQ answers, digits):
kept for good. Dynamic clips are synthesised live (a name or a number read back, a prompt with
the customer's name): the daemon evicts the least recently used beyond audio_cache_max_mb
(default 5% of the state dir's disk, 256 MiB–16 GiB), never within audio_url_keep_hours
(default 24) of their last use nor while their session is open. Reads only.

Examples:
  $ vagent admin cache stats
  $ vagent admin cache stats --state-dir /var/lib/vagent --json | jq .dynamic`,
      ),
  ).action(action(adminCacheCmd, (m) => m.cacheStats));
  adminOptions(
    cache
      .command('prune')
      .description('evict dynamic clips down to the cap now, least recently used first')
      .option('--dry-run', 'report what would be removed; remove nothing')
      .addHelpText(
        'after',
        `
The daemon does this by itself in the background; prune is for a daemon that is stopped or a
cap just lowered. From outside the daemon, prune cannot see open sessions, so it removes only
dynamic clips unused for audio_url_keep_hours + 2 hours (a running daemon notices, and never
hands out the URL of a removed clip: the next turn that needs one synthesises it again).
Static clips are never removed. The cap and keep window are read from the same settings as
vagent serve (--config, VAGENT_AUDIO_CACHE_MAX_MB, VAGENT_AUDIO_URL_KEEP_HOURS).

Examples:
  $ vagent admin cache prune --dry-run
  $ VAGENT_AUDIO_CACHE_MAX_MB=1024 vagent admin cache prune --json`,
      ),
  ).action(action(adminCacheCmd, (m) => m.cachePrune));
  const db = admin.command('db').description("the state database's size and disk space");
  adminOptions(
    db
      .command('stats')
      .description('file and WAL size, free pages, auto-vacuum mode and rows per table (works while the daemon runs)')
      .addHelpText(
        'after',
        `
Free pages are space SQLite holds for reuse. With auto-vacuum "incremental" (every database
created by this version), the daemon gives them back to the disk in the background, a little at
a time; with "none" (a database created by an older vagent and too big to convert at start-up)
they are never given back until \`vagent admin db vacuum\` converts the file once.
Counting rows reads every table: up to a second per million rows when they are not in memory.

Examples:
  $ vagent admin db stats
  $ vagent admin db stats --state-dir /var/lib/vagent --json | jq '{file_bytes, free_pages, auto_vacuum}'`,
      ),
  ).action(action(adminDbCmd, (m) => m.stats));
  adminOptions(
    db
      .command('vacuum')
      .description('convert the database to incremental auto-vacuum and compact it (the daemon must be stopped)')
      .addHelpText(
        'after',
        `
Rewrites the whole file (SQLite VACUUM), so it refuses while a daemon serves the state dir, and
needs free disk of about twice the live data (checked first; SQLite's temporary copy goes in the
state dir unless SQLITE_TMPDIR names another directory). About 4 s per 256 MiB on a small VPS.
A database created by this version never needs it: its free pages are given back in the
background. \`vagent serve\` says at start-up when it is worth running.

Examples:
  $ vagent admin db vacuum --state-dir /var/lib/vagent      # after stopping vagent serve
  $ vagent admin db vacuum --json | jq '{before_bytes, after_bytes}'
  $ sudo systemctl stop vagent && sudo -u vagent vagent admin db vacuum --state-dir /var/lib/vagent && sudo systemctl start vagent`,
      ),
  ).action(action(adminDbCmd, (m) => m.vacuum));

  adminOptions(
    admin
      .command('purge')
      .description('delete sessions, calls and events older than a date (works while the daemon runs)')
      .option('--before <date>', 'cut-off: YYYY-MM-DD (start of that day in the timezone setting) or an ISO 8601 time with offset')
      .option(
        '--tenant <name>',
        "only this tenant's sessions, calls and audit events (default: every tenant, and telephony events and unused agent revisions)",
      )
      .option('--dry-run', 'count what would be deleted, per table, and change nothing')
      .addHelpText(
        'after',
        `
Deletes ended sessions created before the cut-off with their turns and calls, audit events and
processed telephony events recorded before it, and agent revisions applied before it that no
agent and no remaining session uses. Never an open session, nor a call whose line may still be
up. Daily spend already counted stays counted. The retention_days settings do not apply here:
the cut-off is the one given. Deletes in small batches, so the daemon keeps serving meanwhile;
the API then answers not_found for a purged session or call.

Archive first, then purge with the same cut-off:
  $ vagent admin export --before 2026-01-01 --output sessions-2025.jsonl
  $ vagent admin purge --before 2026-01-01

Examples:
  $ vagent admin purge --before 2026-01-01 --dry-run
  $ vagent admin purge --before 2026-01-01T00:00:00+05:30 --tenant acme-collections
  $ vagent admin purge --before 2025-10-01 --json`,
      ),
  ).action(action(adminCmd, (m) => m.purge));
  adminOptions(
    admin
      .command('export')
      .description('write sessions with their turns and calls as JSON lines (an archive before purging)')
      .option('--tenant <name>', "only this tenant's sessions (default: every tenant)")
      .option(
        '--since <date>',
        'sessions created at or after: YYYY-MM-DD (start of that day in the timezone setting) or an ISO 8601 time with offset',
      )
      .option('--before <date>', 'sessions created before: the same forms')
      .option('-o, --output <file>', 'write to this new file, mode 0600 (default: stdout)')
      .option('--force', 'overwrite --output when it exists')
      .addHelpText(
        'after',
        `
One line per session, oldest first: the session as GET /v1/sessions/{id} shows it (its turns
and the session object), its tenant, and calls: its call as GET /v1/calls/{id} shows it. No
keys or credentials. With --output, --json prints {"sessions", "output"} when done.
To archive what a purge deletes, export then purge with the same --before.

Examples:
  $ vagent admin export --before 2026-01-01 --output sessions-2025.jsonl
  $ vagent admin export --tenant acme-collections --since 2025-12-01 --before 2026-01-01 | gzip > acme-2025-12.jsonl.gz
  $ vagent admin export --since 2025-12-01T00:00:00Z --output dec.jsonl --json`,
      ),
  ).action(action(adminCmd, (m) => m.exportSessionsCommand));

  examples(
    program
      .command('completion')
      .addArgument(new Argument('<shell>', 'the shell to complete in').choices(['bash', 'zsh', 'fish']))
      .description('print a shell completion script (commands, subcommands and options)'),
    'vagent completion bash > ~/.local/share/bash-completion/completions/vagent',
    'vagent completion zsh > "${fpath[1]}/_vagent"',
    'vagent completion fish > ~/.config/fish/completions/vagent.fish',
    'source <(vagent completion bash)     # this shell only',
  ).action(async (shell: 'bash' | 'zsh' | 'fish') => {
    const { completionScript } = await import('./completion.js');
    process.stdout.write(completionScript(program, shell));
  });

  // `-v`/`--version`: the commit is looked up only when asked for (it may run git).
  program.on('option:version', () => {
    const line = versionLine();
    process.stdout.write(`${line}\n`);
    throw new CommanderError(EXIT.ok, 'commander.version', line);
  });

  return program;
}

/**
 * True when `argv` asks for `--json` (before any `--`). Read from argv itself so that a
 * command line commander refuses still gets its error as JSON.
 */
function wantsJson(argv: string[]): boolean {
  const args = argv.slice(2);
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/**
 * Runs the CLI with `argv` and returns the exit code; the only place errors become exit codes.
 * With `--json`, an error is one JSON line on stderr (`{"error": {code, message, param?}}`).
 */
export async function main(argv: string[] = process.argv): Promise<number> {
  const json = wantsJson(argv);
  const program = buildProgram();
  forEachCommand(program, (cmd) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeErr: (s) => process.stderr.write(s),
      // With --json, commander's own error text is replaced by the JSON error printed below.
      outputError: (s, write) => {
        if (!json) write(s);
      },
    });
    if (json) cmd.showHelpAfterError(false);
  });
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      if (json) printError(err, true);
      return exitCodeOf(err);
    }
    printError(err, json);
    return exitCodeOf(err);
  }
}

/** Calls `fn` on `cmd` and every subcommand below it (settings set after building are not inherited). */
function forEachCommand(cmd: Command, fn: (cmd: Command) => void): void {
  fn(cmd);
  for (const sub of cmd.commands) forEachCommand(sub, fn);
}

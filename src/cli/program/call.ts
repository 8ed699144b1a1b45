/**
 * `vagent call …`: outbound calls (place, show, list, hangup) and the carrier-stream simulator
 * (`call simulate`).
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { Option, type Command } from 'commander';
import { action, examples } from '../command-kit.js';

const callCmd = () => import('../commands/call.js');
const callPlaceCmd = () => import('../commands/call-place.js');
const callSimulateCmd = () => import('../commands/call-simulate.js');

/** Declares the `call` command group on `program`. */
export function registerCallCommands(program: Command): void {
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
    .action(action(callPlaceCmd, (m) => m.place));
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
      .command('recording')
      .argument('<call-id>', 'cl_… id')
      .description("save a call's recording (a 16 kHz WAV: mono, or dual with the caller left and the agent right)")
      .requiredOption('-o, --output <file>', 'where to write the WAV ("-" for stdout)')
      .option('--force', 'replace an existing file'),
    'vagent call recording cl_4503599627370497 -o call.wav',
    'vagent call recording cl_4503599627370497 -o - | ffplay -nodisp -autoexit -',
  ).action(action(callCmd, (m) => m.recording));
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
    .option(
      '--hang-up',
      "hang up once the agent's reply to the last line or keys has played (default: stay on the line until the agent ends the call or --timeout-s passes)",
    )
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
naming the turns. The call lasts until the agent ends it (or --timeout-s passes); with --hang-up
the caller hangs up once the reply to its last line or keys has played. Ctrl-C hangs up, prints
the summary and exits 130.

Examples:
  $ vagent call simulate ag_clinic_booking --say "My name is Priya Sharma" --say "tomorrow at 5 pm" --say "yes"
  $ vagent call simulate ag_clinic_booking --wav name.wav --say "tomorrow at 5 pm" --transport exotel
  $ vagent call simulate ag_emi_reminder --customer-name "Ravi Kumar" --context @ravi.json --say "I will pay on Friday" --barge-in
  $ vagent call simulate ag_clinic_booking --say "Priya Sharma" --say yes --say tomorrow --say yes --say "5 pm" --say yes \\
      --dtmf 9876543210# --say yes --json | jq -c 'select(.event == "reply_start")'`,
    )
    .action(action(callSimulateCmd, (m) => m.simulate));
}

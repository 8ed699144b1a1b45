/**
 * `vagent chat` and `vagent session …`: talking to an agent in text, and the sessions it (or a call)
 * opens (list, show, end).
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { type Command } from 'commander';
import { action, examples } from '../command-kit.js';

const chatCmd = () => import('../commands/chat.js');
const sessionCmd = () => import('../commands/session.js');

/** Declares `chat` and the `session` command group on `program`. */
export function registerSessionCommands(program: Command): void {
  program
    .command('chat')
    .argument('<agent-id>', 'the agent to talk to, e.g. ag_clinic_booking')
    .description('talk to an agent in text: one line per caller turn')
    .option('--context <json>', "a JSON object for the agent's templates ({{context.…}}), or @file.json to read it from a file")
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
}

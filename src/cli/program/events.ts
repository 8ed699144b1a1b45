/**
 * `vagent events …`: the tenant's event log (docs/events.md), listed or followed live.
 *
 * The group is reached through {@link eventsGroup}, so that other files may add their own
 * subcommands to it (each registering function calls it, in any order). Each action imports its
 * handler lazily, so a command loads only the modules it uses.
 */
import type { Command } from 'commander';
import { action, collect, examples } from '../command-kit.js';

const eventsCmd = () => import('../commands/events.js');

/** The `events` command group of `program`, declared on first use. */
export function eventsGroup(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'events') ??
    program.command('events').description("the event log: every change of the tenant's calls and sessions, in order (docs/events.md)")
  );
}

/** `--type` and `--call`, the filters of every `events` command that reads the log. */
function filterOptions(cmd: Command): Command {
  return cmd
    .option(
      '--type <pattern>',
      'only these event types: a type or a pattern, e.g. call.* or session.turn (repeat, or comma-separate)',
      collect,
    )
    .option('--call <call-id>', "only this call's events (cl_…)");
}

const LINE_HELP = `
Each event is one line: its time, the type, its id (evt_…, in log order), the call (or the
session) and a few words of its data (an end reason, what was heard, the layer and latency):
  2026-11-27 12:00:01  --> call.answered     evt_000000000042  cl_4503599627370497
With --json, each event is one JSON object per line (the API's event object, as a webhook gets
it), for jq or a script; list ends with one more line, the page's {"has_more", "next_cursor"}
(give next_cursor to --after for the next page). Types: call.created, call.ringing, call.answered, call.failed,
call.ended, call.barge_in, call.dtmf, session.opened, session.turn, session.ended,
inbound.unrouted, budget.exceeded.`;

/** Declares `events list` and `events tail` on `program`. */
export function registerEventsCommands(program: Command): void {
  const events = eventsGroup(program);
  examples(
    filterOptions(events.command('list').alias('ls').description('list events, oldest first: one page of up to --limit'))
      .option('--after <event-id>', 'start after this event id (evt_…): the last id of the page before')
      .option('--limit <n>', 'events per page, 1–100 (default 100)')
      .addHelpText('after', LINE_HELP),
    'vagent events list',
    'vagent events list --type call.ended --limit 20',
    "vagent events list --call cl_4503599627370497 --json | jq -r '.type // empty'",
    'vagent events list --after evt_000000000100',
  ).action(action(eventsCmd, (m) => m.list));
  examples(
    filterOptions(events.command('tail').description('follow events as they happen, until Ctrl-C'))
      .option('--after <event-id>', 'first replay the events after this id (evt_…), then follow')
      .addHelpText(
        'after',
        `${LINE_HELP}

The stream is the daemon's Server-Sent Events (GET /v1/events). When the connection drops or
the daemon restarts, tail says so on stderr and reconnects with backoff, resuming after the last
event it printed: no event is lost or printed twice. Stop it with Ctrl-C (exit 130).`,
      ),
    'vagent events tail',
    "vagent events tail --type 'call.*' --type session.turn",
    'vagent events tail --call cl_4503599627370497',
    'vagent events tail --json | jq -c \'select(.type == "call.ended") | {call_id, reason: .data.end_reason}\'',
  ).action(action(eventsCmd, (m) => m.tail));
}

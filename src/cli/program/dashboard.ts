/**
 * `vagent dashboard`: the live calls on a full-screen terminal UI. Its handler (and with it Ink
 * and React) is imported only when the command runs.
 */
import type { Command } from 'commander';
import { action, examples } from '../command-kit.js';

const dashboardCmd = () => import('../commands/dashboard.js');

/** Declares `dashboard` on `program`. */
export function registerDashboardCommand(program: Command): void {
  examples(
    program
      .command('dashboard')
      .description('watch the calls live: a full-screen view of the calls in progress, their turns, costs and events')
      .addHelpText(
        'after',
        `
The header shows the daemon, the tenant, whether the event stream is live or reconnecting, the
calls in progress and today, the spend today against the daily budget, the share of replies
from the audio cache, and the telephony and recogniser status. Each call shows its direction,
its number (masked), the agent, the workflow steps done, its duration, what the caller last
said and the reply, the layer that replied, the turn's latency (red over 1 s) and its cost so
far. An ended call stays a minute, faded, with its end reason.

Keys: ↑ ↓ or j k move, Enter opens a call (its transcript, with each turn's layer, latency and
cost, and its events), Esc goes back, h hangs up (after y), / filters, ? lists the keys, q quits.

It needs a terminal of 80×24 or more; NO_COLOR turns colours off. Without a terminal (a pipe,
a script) it exits 2: use \`vagent events tail --json\` there. After a dropped connection or a
daemon restart it reconnects by itself, resuming the event stream where it left off.`,
      ),
    'vagent dashboard',
    'vagent dashboard --url http://10.0.0.5:8787',
    'NO_COLOR=1 vagent dashboard',
  ).action(action(dashboardCmd, (m) => m.dashboard));
}

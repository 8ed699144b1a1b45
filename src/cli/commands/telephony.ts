/**
 * `vagent telephony check` (DESIGN.md §7; `GET /v1/telephony/check`): asks the daemon to make
 * one authenticated LiveKit request, and explains in plain words what to change when it fails.
 * Also shows the inbound webhook event counts and the tenant's budget for today.
 */
import type { TelephonyCheckResult } from '../../client/index.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { bad, dim, ok, plural, printFields, printJson, rupees, say } from '../output.js';

/** What each problem means and what to do about it (on the daemon's side: it holds the settings). */
const PROBLEMS: Record<string, { title: string; fix: string[] }> = {
  not_configured: {
    title: 'LiveKit is not configured on the daemon',
    fix: [
      'Set all three for `vagent serve` (in its environment, or as livekit: url, api_key and',
      'api_secret in its config file), then restart it:',
      '  LIVEKIT_URL=wss://livekit.example.in',
      '  LIVEKIT_API_KEY=<key of a LiveKit project>',
      '  LIVEKIT_API_SECRET=<its secret>',
      'Until then calls can be prepared (vagent call place without --dial) but not dialled,',
      'and inbound calls cannot reach vagent.',
    ],
  },
  unauthenticated: {
    title: "LiveKit rejected the daemon's credentials",
    fix: [
      'LIVEKIT_API_KEY and LIVEKIT_API_SECRET are not a key/secret pair of the LiveKit project at',
      'LIVEKIT_URL. Copy both from the same key in LiveKit (look for a stray space or a rotated',
      'secret, or a key of another project), then restart vagent serve.',
    ],
  },
  permission_denied: {
    title: 'LiveKit refused the request',
    fix: [
      'The key/secret pair is valid but lacks the grants vagent needs (SIP admin and call, room',
      'admin). Create a key with them in LiveKit, set it for vagent serve and restart it.',
    ],
  },
  unreachable: {
    title: 'LiveKit cannot be reached from the daemon',
    fix: [
      'Check LIVEKIT_URL (wss:// or https://, host and port), that the LiveKit server is running,',
      "and that the daemon's host can reach it (DNS, firewall, TLS certificate).",
    ],
  },
  error: {
    title: 'LiveKit answered with an error',
    fix: ["The message above is LiveKit's own; the LiveKit server's logs say more."],
  },
};

/** `{done: 3, ignored: 1}` as `done 3, ignored 1`, or a dim `none`. */
function counts(c: Record<string, number>): string {
  const entries = Object.entries(c).filter(([, n]) => n > 0);
  return entries.length === 0 ? dim('none') : entries.map(([k, n]) => `${k} ${n}`).join(', ');
}

function budgetLine(b: TelephonyCheckResult['budget']): string {
  const day = dim(`(${b.day}, ${b.timezone})`);
  if (b.budget_inr === null) return `${rupees(b.spent_inr)} spent or held by open calls, no daily budget ${day}`;
  const pct = b.budget_inr > 0 ? Math.round((b.spent_inr / b.budget_inr) * 100) : 0;
  return `${rupees(b.spent_inr)} of ${rupees(b.budget_inr)} spent or held by open calls (${pct}%) ${day}`;
}

/**
 * `vagent telephony check`: LiveKit reachability and credentials, outbound trunk count and
 * latency, inbound webhook events and today's budget.
 * @throws CliError (exit 1) when the check failed (after printing the report; `--json`
 *   prints the response as it is first).
 */
export async function check(ctx: CommandContext): Promise<void> {
  const r = await (await ctx.client()).telephonyCheck();
  if (ctx.json) printJson(r);
  else printCheck(r);
  if (!r.ok) throw new CliError(`telephony check failed: ${r.problem ?? 'error'}${r.message && ctx.json ? `: ${r.message}` : ''}`, EXIT.error);
}

function printCheck(r: TelephonyCheckResult): void {
  if (r.ok) {
    const trunks = r.outbound_trunks ?? 0;
    ok(`LiveKit at ${r.url ?? '?'} answers: ${plural(trunks, 'outbound SIP trunk')}, ${r.ms ?? '?'} ms`);
  } else {
    const p = PROBLEMS[r.problem ?? 'error'] ?? PROBLEMS.error!;
    say(`${bad('✘')} ${p.title}${r.url ? ` (${r.url})` : ''}`);
    if (r.message) say(`  ${r.message}`);
    say();
    for (const line of p.fix) say(line);
    say();
  }
  printFields([
    ['media agent', r.agent_name ?? dim('-')],
    ['inbound events', `since start: ${counts(r.events.since_start)} ${dim('·')} recorded: ${counts(r.events.recorded)}`],
    ['budget today', budgetLine(r.budget)],
  ]);
}

/**
 * `vagent telephony check` (docs/calls.md "Connecting LiveKit"; `GET /v1/telephony/check`): asks the daemon to make
 * one authenticated LiveKit request, and explains in plain words what to change when it fails.
 * Also shows the inbound webhook event counts, the tenant's budget for today, and each configured
 * cloud speech recogniser's handshake (docs/media.md "Cloud speech recognition"), with what to do when one fails.
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

/** Names of the recognisers' settings, for the fixes. */
const RECOGNIZER_NAMES: Record<string, { title: string; key: string; url: string; defaultUrl: string }> = {
  deepgram: {
    title: 'Deepgram',
    key: 'DEEPGRAM_API_KEY (deepgram.api_key)',
    url: 'VAGENT_DEEPGRAM_URL (deepgram.url)',
    defaultUrl: 'wss://api.deepgram.com/v1/listen',
  },
  sarvam: {
    title: 'Sarvam AI',
    key: 'SARVAM_API_KEY (sarvam.api_key)',
    url: 'VAGENT_SARVAM_URL (sarvam.url)',
    defaultUrl: 'wss://api.sarvam.ai/speech-to-text/ws',
  },
};

/** What a recogniser's problem means and what to do about it. */
function recognizerFix(provider: string, problem: string): string[] {
  const n = RECOGNIZER_NAMES[provider] ?? { title: provider, key: 'its API key', url: 'its URL', defaultUrl: "the provider's" };
  switch (problem) {
    case 'unauthenticated':
      return [
        `${n.title} did not accept the key. Set ${n.key} for vagent serve to a valid key of your`,
        `${n.title} account (look for a stray space, a revoked key, or one of another project), then restart it.`,
      ];
    case 'rate_limited':
      return [
        `${n.title} is refusing new streams for now (429): too many at once, or the account's`,
        `credit or quota is used up. Callers fall back to the embedded recogniser (English) or to keys`,
        `and a polite hang-up until it recovers; check the account's usage and limits.`,
      ];
    case 'unreachable':
      return [
        `${n.title} cannot be reached from the daemon. Check ${n.url} (default ${n.defaultUrl}),`,
        "and that the daemon's host can reach it (DNS, firewall, proxy, TLS certificate).",
      ];
    default:
      return [`${n.title} answered with an error; the message above says what it was.`];
  }
}

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
 * latency, inbound webhook events, today's budget, and the cloud speech recognisers.
 * @throws CliError (exit 1) when the LiveKit check or a recogniser's failed (after printing the
 *   report; `--json` prints the response as it is first).
 */
export async function check(ctx: CommandContext): Promise<void> {
  const r = await (await ctx.client()).telephonyCheck();
  if (ctx.json) printJson(r);
  else printCheck(r);
  if (!r.ok)
    throw new CliError(`telephony check failed: ${r.problem ?? 'error'}${r.message && ctx.json ? `: ${r.message}` : ''}`, EXIT.error);
  const failed = (r.recognizers ?? []).filter((x) => !x.ok);
  if (failed.length > 0)
    throw new CliError(
      `speech recognition check failed: ${failed.map((x) => `${x.provider} ${x.problem ?? 'error'}`).join(', ')}`,
      EXIT.error,
    );
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
    ['joins rooms as', r.agent_name ?? dim('-')],
    ['inbound events', `since start: ${counts(r.events.since_start)} ${dim('·')} recorded: ${counts(r.events.recorded)}`],
    ['budget today', budgetLine(r.budget)],
  ]);
  printRecognizers(r.recognizers ?? []);
}

function printRecognizers(list: NonNullable<TelephonyCheckResult['recognizers']>): void {
  if (list.length === 0) return;
  say();
  for (const x of list) {
    const title = RECOGNIZER_NAMES[x.provider]?.title ?? x.provider;
    const used =
      x.used_for.length === 0
        ? dim('(key set, not used by any language)')
        : dim(`(${x.used_for.map((r) => (r === '*' ? 'default' : r)).join(', ')})`);
    if (x.ok) {
      ok(`speech recognition: ${title} accepts the key, ${x.ms} ms ${used}`);
      continue;
    }
    say(`${bad('✘')} speech recognition: ${title}: ${x.problem ?? 'error'} ${used}`);
    if (x.message) say(`  ${x.message}`);
    for (const line of recognizerFix(x.provider, x.problem ?? 'error')) say(`  ${line}`);
  }
}

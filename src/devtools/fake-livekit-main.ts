/**
 * `node dist/devtools/fake-livekit-main.js` (`npm run fake-livekit`): runs the fake LiveKit
 * server of ./fake-livekit.ts for trying vagent without a LiveKit server, or sends one
 * simulated inbound-call webhook (`inbound`) or hang-up (`hangup`) to vagent.
 *
 * Serving prints the three `export LIVEKIT_…` lines for the shell that runs `vagent serve` on
 * stdout, then one line per API request on stderr. Trunk credentials are never printed.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { closeOnSignals, parsePort, restartNote, shellQuote, UsageError } from './cli.js';
import { parseCalleeLines, type CalleeScript } from './fake-room-media.js';
import type { FakeLiveKitOptions, RecordedRequest, WebhookDelivery } from './fake-livekit-api.js';
import { startFakeLiveKit } from './fake-livekit.js';

const USAGE = `usage:
  fake-livekit [--port 7880] [--host 127.0.0.1] [--api-key K] [--api-secret S] [--webhook URL]
               [--callee LINE]... [--callee-script FILE] [--callee-language en-IN]
      serve a fake LiveKit API and its call rooms; prints the exports for \`vagent serve\`.
      The person who answers a dialled call says the --callee lines (or the script file's lines)
      one after each of vagent's replies; a line "dtmf: 123#" presses keys, "wait: 1500" pauses,
      "barge: TEXT" talks over vagent's next reply, "hangup" hangs up.
  fake-livekit inbound --webhook URL --from E164 --to E164 [--room R] [--api-key K] [--api-secret S]
      send one signed participant_joined of an inbound SIP caller; prints {callId, room, identity}
  fake-livekit hangup --webhook URL --call-id SCL_… --room R --identity I [--inbound] [--api-key K] [--api-secret S]
      send participant_left for that SIP participant`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'api-key': { type: 'string' },
  'api-secret': { type: 'string' },
  webhook: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  room: { type: 'string' },
  'call-id': { type: 'string' },
  identity: { type: 'string' },
  inbound: { type: 'boolean' },
  callee: { type: 'string', multiple: true },
  'callee-script': { type: 'string' },
  'callee-language': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** The named options, or a UsageError naming the first missing one. */
function required<K extends keyof Values>(values: Values, ...names: K[]): { [P in K]-?: NonNullable<Values[P]> } {
  const missing = names.find((n) => values[n] === undefined || values[n] === '');
  if (missing) throw new UsageError(`--${String(missing)} is required`);
  return values as { [P in K]-?: NonNullable<Values[P]> };
}

/** One stderr line for a request: method, room, dialed number, trunk host and whether it carries credentials. */
function requestLine(r: RecordedRequest, status: number): string {
  const b = r.body;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const trunk = (b.trunk ?? {}) as Record<string, unknown>;
  const parts = [`${status}`, `${r.service}/${r.method}`];
  const room = str(b.roomName) ?? str(b.room);
  if (room) parts.push(`room=${room}`);
  if (str(b.identity)) parts.push(`identity=${str(b.identity)}`);
  if (str(b.sipCallTo)) parts.push(`to=${str(b.sipCallTo)}`);
  if (str(b.sipTrunkId)) parts.push(`trunk=${str(b.sipTrunkId)}`);
  const host = str(trunk.hostname) ?? str(trunk.address);
  if (host) parts.push(`trunk_host=${host}`);
  if (b.trunk !== undefined) parts.push(`auth: ${str(trunk.authUsername) || str(trunk.authPassword) ? 'yes' : 'no'}`);
  return `[fake-livekit] ${parts.join(' ')}`;
}

function webhookLine(d: WebhookDelivery): string {
  return `[fake-livekit] webhook ${d.event} → ${d.url}: ${d.status ?? d.error}`;
}

/** The callee script of the serve options, or undefined for a silent callee. */
function calleeScript(values: Values): CalleeScript | undefined {
  const lines: string[] = [];
  if (values['callee-script'] !== undefined) {
    let text: string;
    try {
      text = readFileSync(values['callee-script'], 'utf8');
    } catch (err) {
      throw new UsageError(
        `--callee-script: cannot read ${values['callee-script']}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    lines.push(...text.split(/\r?\n/));
  }
  lines.push(...(values.callee ?? []));
  if (lines.length === 0) return undefined;
  try {
    return { steps: parseCalleeLines(lines), language: values['callee-language'] ?? 'en-IN' };
  } catch (err) {
    throw new UsageError(`--callee: ${(err as Error).message}`);
  }
}

/** Serves until SIGINT/SIGTERM. */
async function serve(values: Values): Promise<void> {
  const callee = calleeScript(values);
  const fake = await startFakeLiveKit({
    ...(callee ? { callee } : {}),
    ...credentials(values),
    host: values.host ?? '127.0.0.1',
    port: parsePort(values.port, 7880),
    webhookUrl: values.webhook,
    onRequest: (r, status) => process.stderr.write(`${requestLine(r, status)}\n`),
    onWebhook: (d) => process.stderr.write(`${webhookLine(d)}\n`),
  });
  process.stdout.write(
    [
      `export LIVEKIT_URL=${shellQuote(fake.url)}`,
      `export LIVEKIT_API_KEY=${shellQuote(fake.apiKey)}`,
      `export LIVEKIT_API_SECRET=${shellQuote(fake.apiSecret)}`,
      // A development aid, not a setting: vagent joins this fake's rooms with the development room driver.
      'export VAGENT_DEV_FAKE_ROOMS=1',
    ].join('\n') + '\n',
  );
  if (callee) process.stderr.write(`[fake-livekit] callees say ${callee.steps.length} scripted step(s) in ${callee.language}\n`);
  process.stderr.write(
    `[fake-livekit] listening on ${fake.url}${fake.webhookUrl ? `, webhooks to ${fake.webhookUrl}` : ''}; Ctrl-C stops\n`,
  );
  process.stderr.write(restartNote('fake-livekit', 4));
  closeOnSignals('fake-livekit', () => fake.close());
}

function credentials(values: Values): Pick<FakeLiveKitOptions, 'apiKey' | 'apiSecret'> {
  return { apiKey: values['api-key'], apiSecret: values['api-secret'] };
}

/** Runs `fn` against a short-lived fake (webhook signing only; nothing calls its API). */
async function oneShot<T>(values: Values, fn: (fake: Awaited<ReturnType<typeof startFakeLiveKit>>) => Promise<T>): Promise<T> {
  const fake = await startFakeLiveKit({ ...credentials(values), host: '127.0.0.1', port: 0 });
  try {
    return await fn(fake);
  } finally {
    await fake.close();
  }
}

/** Runs one command line; returns the exit code (serving keeps the process alive after returning 0). */
async function main(argv: string[]): Promise<number> {
  let values: Values;
  let command: string | undefined;
  try {
    const parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
    values = parsed.values;
    command = parsed.positionals[0];
    if (parsed.positionals.length > 1) throw new UsageError(`unexpected argument: ${parsed.positionals[1]}`);
  } catch (err) {
    process.stderr.write(`fake-livekit: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    if (command === undefined || command === 'serve') {
      await serve(values);
      return 0;
    }
    if (command === 'inbound') {
      const v = required(values, 'webhook', 'from', 'to');
      const call = await oneShot(values, (f) => f.simulateInbound({ from: v.from, to: v.to, room: values.room, url: v.webhook }));
      process.stdout.write(`${JSON.stringify({ callId: call.callId, room: call.room, identity: call.identity })}\n`);
      process.stderr.write(`[fake-livekit] participant_joined → ${v.webhook}: ${call.status}\n`);
      return call.status >= 200 && call.status < 300 ? 0 : 1;
    }
    if (command === 'hangup') {
      const v = required(values, 'webhook', 'call-id', 'room', 'identity');
      const { status } = await oneShot(values, (f) =>
        f.hangup({ callId: v['call-id'], room: v.room, identity: v.identity, inbound: values.inbound ?? false, url: v.webhook }),
      );
      process.stderr.write(`[fake-livekit] participant_left → ${v.webhook}: ${status}\n`);
      return status >= 200 && status < 300 ? 0 : 1;
    }
    throw new UsageError(`unknown command: ${command}`);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`fake-livekit: ${err.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`fake-livekit: ${(err as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));

/**
 * `vagent call place|show|list`, `vagent telephony check` and `vagent admin tenant set|show`
 * through the built binary against a real daemon: without LiveKit, prepare-only calls, their
 * status and lists, bad values (exit 1) and bad arguments (exit 2), dialling without telephony (exit 1), the telephony
 * doctor's explanation, and a tenant's budget and inbound webhook secret; with the fake LiveKit
 * (src/devtools), a ringing dial, a busy callee and a dial whose outcome is unknown.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { openRuntime } from '../../src/daemon/runtime.js';
import { EMI_CONTEXT } from '../support/agents.js';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, tempDir, type Daemon } from '../support/daemon.js';

const PLACEMENT_KEYS = ['call_id', 'session_id', 'agent_id', 'to', 'from', 'idempotent', 'status', 'dial_required'];
const STATUS_KEYS = [
  'call_id',
  'session_id',
  'agent_id',
  'status',
  'started_at',
  'ended_at',
  'duration_s',
  'customer_name',
  'cost',
  'direction',
  'to',
  'from',
  'dial_status',
  'dial_error',
  'trunk_id',
  'room_name',
  'provider_call_id',
  'answered_at',
  'transport',
  'source',
  'recording_url',
];
const TO = '+919876543210';
const FROM = '+912240001234';
/** What ag_emi_reminder needs to open (its required_context and a customer name). */
const EMI_ARGS = ['--customer-name', 'Ravi Kumar', '--context', JSON.stringify(EMI_CONTEXT)];

let daemon: Daemon;
let key: string;
/** Calls placed here, oldest first. */
const placed: string[] = [];

/** Runs a command against the daemon with the test's key. */
const vagent = (args: string[], input?: string) =>
  runCli(args, { env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key }, ...(input === undefined ? {} : { input }) });
/** `vagent admin …args --state-dir <the daemon's>`. */
const admin = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
  runCli(['admin', ...args, '--state-dir', daemon.stateDir], opts);

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon({ env: { VAGENT_SPEECH: 'off' } });
  key = await adminKey(daemon.stateDir);
}, 30_000);
afterAll(cleanupAll, 30_000);

describe('vagent call place (prepare only)', { timeout: 30_000 }, () => {
  it('prepares a call and says how to follow its session', async () => {
    const res = await vagent(['call', 'place', '--agent', 'ag_emi_reminder', ...EMI_ARGS, '--to', TO]);
    expect(res.code, res.stderr).toBe(0);
    const id = /call (cl_\d+) prepared: nothing was dialled/.exec(res.stdout)?.[1];
    expect(id, res.stdout).toBeDefined();
    const n = id!.slice(3);
    expect(res.stdout).toMatch(new RegExp(`^session:\\s+se_${n}$`, 'm'));
    expect(res.stdout).toMatch(/^status:\s+prepared$/m);
    expect(res.stdout).toMatch(new RegExp(`^to:\\s+\\${TO}$`, 'm'));
    expect(res.stderr).toContain(`vagent session show se_${n}`);
    expect(res.stderr).toContain(`vagent session end se_${n}`);
    expect(res.stderr).toContain('--dial');
    placed.push(id!);
  });

  it('without what the agent needs: exit 1 naming every missing value and the flags to add; nothing placed', async () => {
    const before = (await api(daemon, 'GET', '/v1/calls?limit=100', { key })).body.data.length;
    const res = await vagent(['call', 'place', '--agent', 'ag_emi_reminder', '--to', TO, '--context', '{"emi_amount": "12500"}']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^error: invalid_request: agent ag_emi_reminder needs context\.due_date, context\.loan_last4 and customer_name: /m,
    );
    expect(res.stderr).toContain(`add --customer-name "NAME" --context '{"due_date":"…","loan_last4":"…"}'`);
    expect(res.stdout).toBe('');
    expect((await api(daemon, 'GET', '/v1/calls?limit=100', { key })).body.data.length).toBe(before);
  });

  it('--json prints the placement; the same --idempotency-key replays it instead of preparing twice', async () => {
    const ctxFile = path.join(tempDir(), 'ravi.json');
    fs.writeFileSync(ctxFile, JSON.stringify({ emi_amount: '12500', due_date: 'the 5th', loan_last4: '4321' }));
    const args = [
      'call',
      'place',
      '--agent',
      'ag_emi_reminder',
      '--to',
      TO,
      '--from',
      FROM,
      '--customer-name',
      'Ravi Kumar',
      '--title',
      'EMI reminder',
      '--context',
      `@${ctxFile}`,
      '--idempotency-key',
      'emi-2025-11-ravi',
      '--json',
    ];
    const res = await vagent(args);
    expect(res.code, res.stderr).toBe(0);
    const p = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(Object.keys(p).sort()).toEqual([...PLACEMENT_KEYS].sort());
    expect(p).toMatchObject({
      agent_id: 'ag_emi_reminder',
      to: TO,
      from: FROM,
      idempotent: true,
      status: 'prepared',
      dial_required: true,
    });
    expect(p.call_id).toMatch(/^cl_\d+$/);
    expect(p.session_id).toBe(`se_${(p.call_id as string).slice(3)}`);

    const again = await vagent(args);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(p);
    placed.push(p.call_id as string);

    const inline = await vagent([
      'call',
      'place',
      '--agent',
      'ag_delivery_confirmation',
      '--to',
      '+918123456789',
      '--customer-name',
      'Asha Rao',
      '--context',
      '{"seller_name": "ShopKart", "delivery_date": "tomorrow"}',
      '--json',
    ]);
    expect(inline.code, inline.stderr).toBe(0);
    placed.push(JSON.parse(inline.stdout).call_id);
  });
});

describe('vagent call show and list', { timeout: 30_000 }, () => {
  it('shows a call as fields and as the API object', async () => {
    const id = placed[1]!;
    const json = await vagent(['call', 'show', id, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const call = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(Object.keys(call).sort()).toEqual([...STATUS_KEYS].sort());
    expect(call).toEqual((await api(daemon, 'GET', `/v1/calls/${id}`, { key })).body);
    expect(call).toMatchObject({
      status: 'in_progress',
      dial_status: 'not_dialled',
      customer_name: 'Ravi Kumar',
      direction: 'outbound',
      from: FROM,
      transport: null,
      source: 'phone',
    });

    const human = await vagent(['call', 'show', id]);
    expect(human.code, human.stderr).toBe(0);
    for (const re of [
      new RegExp(`^call:\\s+${id}$`),
      /^status:\s+in progress$/,
      /^dial status:\s+not dialled$/,
      new RegExp(`^to:\\s+\\${TO}$`),
      new RegExp(`^from:\\s+\\${FROM}$`),
      /^customer:\s+Ravi Kumar$/,
      /^room:\s+-$/,
      /^duration:\s+-$/,
      /^cost:\s+₹0\.00 \(llm ₹0\.00, /,
      /^started:\s+\d{4}-\d\d-\d\d \d\d:\d\d$/,
      /^transport:\s+-$/,
      /^source:\s+phone$/,
    ])
      expect(human.stdout).toMatch(new RegExp(re.source, 'm'));

    const missing = await vagent(['call', 'show', 'cl_123']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: /m);
  });

  it('lists calls newest first, filters by status, and follows every page with --all', async () => {
    const ended = await vagent(['session', 'end', `se_${placed[0]!.slice(3)}`]);
    expect(ended.code, ended.stderr).toBe(0);

    const table = await vagent(['call', 'list']);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CALL\s+STATUS\s+DIAL\s+DIR\s+FROM\s+TO\s+AGENT\s+STARTED\s+DURATION\s+COST$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/)[0])).toEqual([...placed].reverse());
    expect(lines.find((l) => l.startsWith(placed[0]!))).toMatch(
      /completed\s+not dialled\s+out\s+(-|\+\d+)\s+\+919876543210\s+ag_emi_reminder\s+\S+ \S+\s+\d+ s\s+₹0\.00$/,
    );

    const completed = JSON.parse((await vagent(['call', 'list', '--status', 'completed', '--json'])).stdout);
    expect(completed.data.map((c: { call_id: string }) => c.call_id)).toEqual([placed[0]]);
    const open = await vagent(['call', 'list', '--status', 'in_progress']);
    expect(open.stdout).not.toContain(placed[0]);
    expect(open.stdout).toContain(placed[2]);

    const page = await vagent(['call', 'list', '--limit', '1']);
    expect(page.code).toBe(0);
    expect(page.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(page.stderr).toMatch(/more calls: add --all, or --cursor \S+/);
    const pageJson = JSON.parse((await vagent(['call', 'list', '--limit', '1', '--json'])).stdout);
    expect(pageJson).toMatchObject({ has_more: true });
    const next = JSON.parse((await vagent(['call', 'list', '--limit', '1', '--cursor', pageJson.next_cursor, '--json'])).stdout);
    expect(next.data[0].call_id).toBe(placed[1]);

    const all = await vagent(['call', 'list', '--all', '--limit', '1', '--json']);
    expect(all.code, all.stderr).toBe(0);
    const allJson = JSON.parse(all.stdout);
    expect(allJson).toMatchObject({ has_more: false, next_cursor: null });
    expect(allJson.data.map((c: { call_id: string }) => c.call_id)).toEqual([...placed].reverse());
    const allTable = await vagent(['call', 'list', '--all', '--limit', '1']);
    expect(allTable.stdout.trimEnd().split('\n')).toHaveLength(placed.length + 1);
    expect(allTable.stderr).not.toContain('more calls');
  });
});

describe('bad arguments and missing telephony', { timeout: 30_000 }, () => {
  it('refuses bad values locally as invalid_request (exit 1) and bad flags with exit 2, sending nothing', async () => {
    const before = (await api(daemon, 'GET', '/v1/calls?limit=100', { key })).body.data.length;
    const place = ['call', 'place', '--agent', 'ag_emi_reminder'];
    // Values the daemon would refuse with invalid_request: the same code and exit 1 (errors.ts).
    const values: Array<[string[], RegExp]> = [
      [[...place, '--to', '9876543210'], /^error: invalid_request: --to must be an E\.164 number .*"9876543210"/m],
      [[...place, '--to', TO, '--from', '+91 22 4000 1234'], /^error: invalid_request: --from must be an E\.164 number/m],
      [[...place, '--to', TO, '--dial', '--ringing-timeout', '3'], /--ringing-timeout must be a whole number from 5 to 120, not "3"/],
      [[...place, '--to', TO, '--dial', '--max-duration', '1.5'], /--max-duration must be a whole number from 10 to 21600/],
      [[...place, '--to', TO, '--context', '[1, 2]'], /--context must be a JSON object/],
      [[...place, '--to', TO, '--context', '{emi: 1}'], /--context is not valid JSON/],
      [[...place, '--to', TO, '--idempotency-key', 'k'.repeat(256)], /--idempotency-key must be 1 to 255 printable ASCII/],
      [['call', 'list', '--limit', '0'], /--limit must be a whole number from 1 to 100, not "0"/],
      [['call', 'list', '--status', 'ringing'], /--status must be in_progress or completed, not "ringing"/],
    ];
    // A command line vagent cannot act on: exit 2.
    const usage: Array<[string[], RegExp]> = [
      [[...place, '--to', TO, '--trunk', 'tk_3x7kq2m4n5p6r7s8t9va'], /--trunk only apply when dialling: add --dial/],
      [[...place, '--to', TO, '--context', '@/nonexistent/ctx.json'], /cannot read --context file \/nonexistent\/ctx\.json: ENOENT/],
      [[...place], /required option '--to <e164>' not specified/],
    ];
    const cases = [...values.map(([a, m]) => [a, m, 1] as const), ...usage.map(([a, m]) => [a, m, 2] as const)];
    const results = await Promise.all(cases.map(([args]) => vagent(args)));
    cases.forEach(([args, message, code], i) => {
      const res = results[i]!;
      expect(res.code, args.join(' ')).toBe(code);
      expect(res.stderr, args.join(' ')).toMatch(message);
      if (code === 1) expect(res.stderr, args.join(' ')).toMatch(/^error: invalid_request: /m);
      expect(res.stdout).toBe('');
    });
    expect((await api(daemon, 'GET', '/v1/calls?limit=100', { key })).body.data.length).toBe(before);
  });

  it('--dial without LiveKit exits 1 naming telephony_not_configured, with a hint', async () => {
    const res = await vagent(['call', 'place', '--agent', 'ag_emi_reminder', ...EMI_ARGS, '--to', TO, '--dial']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: telephony_not_configured: .*LIVEKIT_URL/m);
    expect(res.stderr).toContain('vagent telephony check');
    expect(res.stdout).toBe('');
  });

  it('telephony check explains what to set on the daemon, and exits 1', async () => {
    const res = await vagent(['telephony', 'check']);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('LiveKit is not configured on the daemon');
    for (const env of ['LIVEKIT_URL=', 'LIVEKIT_API_KEY=', 'LIVEKIT_API_SECRET=']) expect(res.stdout).toContain(env);
    expect(res.stdout).toMatch(/restart/);
    expect(res.stdout).toMatch(
      /^budget today:\s+<?₹\d+\.\d\d spent or held by open calls, no daily budget \(\d{4}-\d\d-\d\d, Asia\/Kolkata\)$/m,
    );
    expect(res.stdout).toMatch(/^inbound events:\s+since start: none · recorded: none$/m);
    expect(res.stderr).toMatch(/^error: telephony check failed: not_configured$/m);

    const json = await vagent(['telephony', 'check', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      url: null,
      problem: 'not_configured',
      agent_name: null,
      budget: { budget_inr: null },
    });
  });
});

describe('vagent admin tenant set and show', { timeout: 30_000 }, () => {
  const showJson = async (name: string) => JSON.parse((await admin(['tenant', 'show', name, '--json'])).stdout) as Record<string, unknown>;

  it('sets the daily budget: rupees, 0 (none for this tenant) and default (the instance setting)', async () => {
    expect((await admin(['tenant', 'create', 'acme-collections'])).code).toBe(0);
    const set = await admin(['tenant', 'set', 'acme-collections', '--budget-inr', '500']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('tenant acme-collections updated');
    expect(set.stdout).toMatch(/^daily budget:\s+₹500\.00 a day$/m);
    expect(await showJson('acme-collections')).toMatchObject({
      daily_budget_inr: 500,
      inbound_webhook_url: null,
      has_inbound_webhook_secret: false,
    });

    expect(JSON.parse((await admin(['tenant', 'set', 'acme-collections', '--budget-inr', '0', '--json'])).stdout)).toMatchObject({
      daily_budget_inr: 0,
    });
    expect((await admin(['tenant', 'show', 'acme-collections'])).stdout).toMatch(
      /^daily budget:\s+none \(0: no budget for this tenant\)$/m,
    );
    expect((await admin(['tenant', 'set', 'acme-collections', '--budget-inr', 'default'])).code).toBe(0);
    expect(await showJson('acme-collections')).toMatchObject({ daily_budget_inr: null });

    const bad = [['--budget-inr', 'lots'], ['--budget-inr', '-5'], []];
    const [nobody, ...refused] = await Promise.all(
      [['nobody', '--budget-inr', '5'], ...bad.map((a) => ['acme-collections', ...a])].map((args) => admin(['tenant', 'set', ...args])),
    );
    // A value the tenant service would refuse is invalid_request, exit 1 (README.md "Exit codes"); nothing to set is bad usage, exit 2.
    refused.forEach((res, i) => expect(res!.code, bad[i]!.join(' ')).toBe(bad[i]!.length === 0 ? 2 : 1));
    for (const res of refused.slice(0, 2)) expect(res!.stderr).toMatch(/^error: invalid_request: --budget-inr must be rupees a day/m);
    expect(nobody!.code).toBe(1);
    expect(nobody!.stderr).toMatch(/^error: not_found: no tenant named nobody/m);
  });

  it('a budget set for default is what the daemon enforces and reports', async () => {
    expect((await admin(['tenant', 'set', 'default', '--budget-inr', '1'])).code).toBe(0);
    const res = await vagent(['call', 'place', '--agent', 'ag_emi_reminder', ...EMI_ARGS, '--to', TO]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: rate_limit_exceeded: tenant default has reached its daily budget of ₹1 /m);
    expect(res.stderr).toContain('vagent admin tenant set');
    expect((await vagent(['telephony', 'check'])).stdout).toMatch(
      /^budget today:\s+<?₹\d+\.\d\d of ₹1\.00 spent or held by open calls \(\d+%\)/m,
    );
    expect((await admin(['tenant', 'set', 'default', '--budget-inr', 'default'])).code).toBe(0);
  });

  it('sets a webhook with a generated secret printed once, which show never prints; none clears both', async () => {
    const url = 'https://crm.acme.in/vagent/route?token=abc';
    const set = await admin(['tenant', 'set', 'acme-collections', '--inbound-webhook', url]);
    expect(set.code, set.stderr).toBe(0);
    const secrets = set.stdout.match(/whsec_[A-Za-z0-9_-]+/g) ?? [];
    expect(secrets).toHaveLength(1);
    const secret = secrets[0]!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(set.stdout).toContain('shown only this once');
    expect(set.stdout).toMatch(/vagent-signature header .*t=<unix seconds>,v1=<hex HMAC-SHA256\(secret, "<t>\.<raw body>"\)>/);
    expect(set.stderr).not.toContain(secret);

    // The printed secret is the one sealed in the state dir.
    const rt = openRuntime(loadSettings({ stateDir: daemon.stateDir }, {}), { recover: false });
    try {
      const sealed = rt.services.repos.tenants.webhookSecretSealed('acme-collections');
      expect(rt.services.credentials.openText(sealed!, 'acme-collections', 'inbound_webhook')).toBe(secret);
    } finally {
      rt.close();
    }

    const show = await admin(['tenant', 'show', 'acme-collections']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^inbound webhook:\s+https:\/\/crm\.acme\.in\/vagent\/route\?token=abc$/m);
    expect(show.stdout).toMatch(/^webhook secret:\s+set \(stored encrypted\)$/m);
    const shown = await showJson('acme-collections');
    expect(shown).toMatchObject({ inbound_webhook_url: url, has_inbound_webhook_secret: true });
    expect(JSON.stringify(shown) + show.stdout + show.stderr).not.toContain('whsec_');
    expect((await admin(['tenant', 'list', '--json'])).stdout).not.toContain('whsec_');

    const json = JSON.parse((await admin(['tenant', 'set', 'acme-collections', '--inbound-webhook', url, '--json'])).stdout);
    expect(json.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(json.webhook_secret).not.toBe(secret);

    const cleared = await admin(['tenant', 'set', 'acme-collections', '--inbound-webhook', 'none', '--json']);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ inbound_webhook_url: null, has_inbound_webhook_secret: false });
    expect(JSON.parse(cleared.stdout)).not.toHaveProperty('webhook_secret');
  });

  it('takes a secret from stdin without printing it', async () => {
    const mine = 'routing-secret-Zq8-4471-abcdef';
    const set = await admin(
      ['tenant', 'set', 'acme-collections', '--inbound-webhook', 'https://crm.acme.in/route', '--webhook-secret-stdin'],
      { input: `${mine}\n` },
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout + set.stderr).not.toContain(mine);
    expect(set.stdout).not.toContain('whsec_');
    expect(await showJson('acme-collections')).toMatchObject({ has_inbound_webhook_secret: true });
    const short = await admin(
      ['tenant', 'set', 'acme-collections', '--inbound-webhook', 'https://crm.acme.in/route', '--webhook-secret-stdin'],
      { input: 'short' },
    );
    expect(short.code).toBe(2);
    const noUrl = await admin(['tenant', 'set', 'acme-collections', '--webhook-secret-stdin'], { input: mine });
    expect(noUrl.code).toBe(2);
  });

  it('refuses http and private targets under the default policy (exit 1), changing nothing', async () => {
    const before = await showJson('acme-collections');
    const cases: Array<[string, RegExp]> = [
      ['http://crm.acme.in/route', /^error: scheme_not_allowed: webhook URL scheme http: is not allowed \(https: only\)$/m],
      ['https://10.0.0.5/route', /^error: address_not_allowed: webhook URL https:\/\/10\.0\.0\.5 is not a public address$/m],
      ['https://127.0.0.1:8443/route', /^error: address_not_allowed: /m],
      ['not a url', /^error: invalid_url: webhook URL is not a valid URL$/m],
    ];
    const results = await Promise.all(
      cases.map(([url]) => admin(['tenant', 'set', 'acme-collections', '--inbound-webhook', url, '--budget-inr', '9'])),
    );
    cases.forEach(([url, message], i) => {
      expect(results[i]!.code, url).toBe(1);
      expect(results[i]!.stderr, url).toMatch(message);
      expect(results[i]!.stdout).toBe('');
    });
    expect((await admin(['tenant', 'set', 'acme-collections', '--inbound-webhook', 'http://10.0.0.5/route'])).stderr).toContain(
      'VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP',
    );
    expect(await showJson('acme-collections')).toEqual(before);

    const allowed = await admin(['tenant', 'set', 'acme-collections', '--inbound-webhook', 'http://10.0.0.5/route', '--json'], {
      env: { VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP: 'true', VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({
      inbound_webhook_url: 'http://10.0.0.5/route',
      has_inbound_webhook_secret: true,
    });
  });
});

describe('with LiveKit (the fake)', { timeout: 30_000 }, () => {
  let fake: FakeLiveKit;
  let lk: Daemon;
  let lkKey: string;
  const dialer = (args: string[]) => runCli(args, { env: { VAGENT_URL: lk.url, VAGENT_API_KEY: lkKey } });

  beforeAll(async () => {
    fake = await startFakeLiveKit();
    // vagent joins call rooms; the fake LiveKit's rooms need the development driver.
    lk = await startDaemon({
      env: {
        LIVEKIT_URL: fake.url,
        LIVEKIT_API_KEY: fake.apiKey,
        LIVEKIT_API_SECRET: fake.apiSecret,
        VAGENT_DEV_FAKE_ROOMS: '1',
        VAGENT_SPEECH: 'off',
      },
    });
    lkKey = await adminKey(lk.stateDir);
    const trunk = await api(lk, 'POST', '/v1/trunks', {
      key: lkKey,
      body: { address: 'sip.example-carrier.in', numbers: [FROM] },
    });
    expect(trunk.status).toBe(201);
  }, 30_000);
  afterAll(async () => {
    await lk?.stop();
    await fake?.close();
  }, 30_000);

  it('telephony check passes (exit 0) with the trunk count, latency and the name vagent joins rooms as', async () => {
    const res = await dialer(['telephony', 'check']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(
      new RegExp(`^✔ LiveKit at ${fake.url.replace(/[.]/g, '\\.')} answers: 0 outbound SIP trunks, \\d+ ms$`, 'm'),
    );
    expect(res.stdout).toMatch(/^joins rooms as:\s+vagent-media$/m);
    expect(JSON.parse((await dialer(['telephony', 'check', '--json'])).stdout)).toMatchObject({ ok: true, outbound_trunks: 0 });
  });

  it('--dial rings the number and prints the room and the provider call id', async () => {
    const before = fake.sipParticipants().length;
    const res = await dialer([
      'call',
      'place',
      '--agent',
      'ag_emi_reminder',
      ...EMI_ARGS,
      '--to',
      TO,
      '--from',
      FROM,
      '--dial',
      '--ringing-timeout',
      '20',
    ]);
    expect(res.code, res.stderr).toBe(0);
    // The daemon waits for the answer (livekit.wait_until_answered), and the fake callee answers.
    const id = /^✔ \+919876543210 answered: call (cl_\d+)$/m.exec(res.stdout)?.[1];
    expect(id, res.stdout).toBeDefined();
    expect(res.stdout).toMatch(/^status:\s+answered$/m);
    expect(res.stdout).toMatch(new RegExp(`^room:\\s+call-${id}$`, 'm'));
    expect(res.stdout).toMatch(/^provider call:\s+SCL_\w+$/m);
    expect(res.stdout).toMatch(/^trunk:\s+tk_[a-z0-9]{20}$/m);
    expect(res.stderr).toContain(`vagent call show ${id}`);
    expect(fake.sipParticipants().length - before).toBe(1);
    expect(fake.sipParticipants().at(-1)!.body).toMatchObject({ sipCallTo: TO, roomName: `call-${id}`, ringingTimeout: '20s' });

    const show = await dialer(['call', 'show', id!]);
    expect(show.stdout).toMatch(/^dial status:\s+answered$/m);
  });

  it('as a new user: a dialled call shows answered, `call hangup` hangs it up, and LiveKit records the removal', async () => {
    // Everything the agent's templates use is given, as the README's examples do.
    const placed = JSON.parse(
      (
        await dialer([
          'call',
          'place',
          '--agent',
          'ag_emi_reminder',
          '--to',
          TO,
          '--dial',
          '--json',
          '--customer-name',
          'Ravi Kumar',
          '--context',
          '{"emi_amount": "12,500", "loan_last4": "4321", "due_date": "25 November"}',
        ])
      ).stdout,
    );
    expect(placed).toMatchObject({ status: 'ringing', dial_status: 'answered', answered_at: expect.any(Number) });
    const id: string = placed.call_id;

    const show = await dialer(['call', 'show', id]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^status:\s+in progress$/m);
    expect(show.stdout).toMatch(/^dial status:\s+answered$/m);
    expect(show.stdout).toMatch(/^answered:\s+\d{4}-\d\d-\d\d \d\d:\d\d$/m);
    expect(show.stderr).toContain(`vagent call hangup ${id}`);
    const list = await dialer(['call', 'list']);
    expect(list.stdout.split('\n').find((l) => l.startsWith(id))).toMatch(/\bin progress\s+answered\b/);

    const before = fake.hangups().length;
    const hung = await dialer(['call', 'hangup', id]);
    expect(hung.code, hung.stderr).toBe(0);
    expect(hung.stdout).toMatch(new RegExp(`^✔ hung up call ${id}: its session has ended$`, 'm'));
    expect(hung.stdout).toMatch(/^line:\s+hung up$/m);
    expect(hung.stdout).toMatch(/^status:\s+completed$/m);
    expect(hung.stdout).toMatch(/^dial status:\s+completed$/m);
    const removal = fake.hangups().slice(before);
    expect(removal.map((r) => r.method)).toEqual(['RemoveParticipant', 'DeleteRoom']);
    expect(removal[0]!.body).toEqual({ room: `call-${id}`, identity: `sip-${id}` });

    // Again: it succeeds and says the line is already gone, with LiveKit not asked again.
    const again = await dialer(['call', 'hangup', id, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      call_id: id,
      line: 'already_gone',
      status: 'completed',
      dial_status: 'completed',
    });
    expect(fake.hangups().length).toBe(before + 2);
    expect((await dialer(['call', 'list', '--status', 'completed'])).stdout).toMatch(
      new RegExp(`^${id}\\s+completed\\s+completed\\b`, 'm'),
    );
  }, 90_000);

  it('call hangup of an unknown call exits 1 naming not_found; a malformed id is session_not_found', async () => {
    const missing = await dialer(['call', 'hangup', 'cl_123456789']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: no call cl_123456789/m);
    expect(missing.stderr).toContain('vagent call list');
    expect((await dialer(['call', 'hangup', 'nonsense'])).stderr).toMatch(/^error: session_not_found: /m);
  });

  it('a busy callee is dial_failed with the SIP status (exit 1)', async () => {
    const res = await dialer(['call', 'place', '--agent', 'ag_emi_reminder', ...EMI_ARGS, '--to', '+919876500486', '--dial']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: dial_failed: .*SIP 486 Busy Here/m);
    expect(res.stderr).toContain('nothing is ringing');
  });

  it('dial_outcome_unknown prints the message and a hint, and the same key never dials again', async () => {
    fake.behaviour.failNext = { status: 503, code: 'unavailable', msg: 'no SIP servers available' };
    const args = ['call', 'place', '--agent', 'ag_emi_reminder', ...EMI_ARGS, '--to', TO, '--dial', '--idempotency-key', 'emi-unknown-1'];
    const res = await dialer(args);
    expect(res.code).toBe(1);
    const id = /^error: dial_outcome_unknown: the outcome of dial (cl_\d+) under this Idempotency-Key is unknown/m.exec(res.stderr)?.[1];
    expect(id, res.stderr).toBeDefined();
    expect(res.stderr).toContain(`\`vagent call show ${id}\``);
    expect(res.stderr).toContain('new --idempotency-key');
    expect(res.stdout).toBe('');

    const dials = fake.sipParticipants().length;
    const again = await dialer(args);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`^error: dial_outcome_unknown: the outcome of dial ${id} `, 'm'));
    expect(fake.sipParticipants().length).toBe(dials);
    expect(JSON.parse((await dialer(['call', 'show', id!, '--json'])).stdout)).toMatchObject({ dial_status: 'unknown' });
  });
});

/**
 * `vagent admin purge`, `vagent admin export` and `vagent admin tenant set --retention-days` on the
 * state dir of a running daemon (docs/api-decisions.md "Retention"): the archive workflow (export,
 * dry run, purge with the same cut-off), what the daemon answers afterwards, and refused input.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cleanupAll, requireBuild, runCli, startDaemonWithKey, tempDir, type Daemon } from '../support/daemon.js';
import { EMI } from '../support/agents.js';

let daemon: Daemon;
let key: string;
/** `vagent admin …args --state-dir <the daemon's>`. */
const admin = (...args: string[]) => runCli(['admin', ...args, '--state-dir', daemon.stateDir]);

interface Counts {
  sessions: number;
  turns: number;
  calls: number;
  telephony_events: number;
  audit_events: number;
  agent_revisions: number;
}

/** Sessions ended before the cut-off (one with a call), and one opened after it. */
let old: { sessions: string[]; call: string };
let cutoff: string;
let recent: string;

beforeAll(async () => {
  requireBuild();
  const started = await startDaemonWithKey({ env: { VAGENT_SPEECH: 'off' } });
  daemon = started.daemon;
  key = started.env.VAGENT_API_KEY!;
  const sessions: string[] = [];
  for (let i = 0; i < 3; i++) {
    const opened = await api(daemon, 'POST', '/v1/sessions', {
      key,
      body: { agent_id: 'ag_clinic_booking', customer_name: 'Priya Sharma' },
    });
    expect(opened.status).toBe(201);
    const id = opened.body.session_id as string;
    expect((await api(daemon, 'POST', `/v1/sessions/${id}/turn`, { key, body: { text: 'My name is Priya Sharma' } })).status).toBe(200);
    expect((await api(daemon, 'POST', `/v1/sessions/${id}/end`, { key })).status).toBe(200);
    sessions.push(id);
  }
  const placed = await api(daemon, 'POST', '/v1/calls', { key, body: { ...EMI, to: '+919876543210' } });
  expect(placed.status).toBe(201);
  expect((await api(daemon, 'POST', `/v1/sessions/${placed.body.session_id as string}/end`, { key })).status).toBe(200);
  sessions.push(placed.body.session_id as string);
  old = { sessions, call: placed.body.call_id as string };
  // Times are stored to the microsecond: a cut-off just after the last end is after them all.
  await new Promise((resolve) => setTimeout(resolve, 20));
  cutoff = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const later = await api(daemon, 'POST', '/v1/sessions', { key, body: { agent_id: 'ag_clinic_booking' } });
  recent = later.body.session_id as string;
  await api(daemon, 'POST', `/v1/sessions/${recent}/end`, { key });
}, 60_000);
afterAll(cleanupAll, 30_000);

describe('vagent serve start-up', () => {
  it('says once that retention is off and how to turn it on', () => {
    expect(
      daemon
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('retention: ')),
    ).toEqual([expect.stringMatching(/^retention: off, records are kept for ever .*VAGENT_RETENTION_DAYS/)]);
  });
});

describe('vagent admin export, then purge with the same cut-off', { timeout: 60_000 }, () => {
  it('exports the sessions before the cut-off as JSON lines with turns and calls, no secrets, to a new 0600 file', async () => {
    const out = path.join(tempDir(), 'archive.jsonl');
    const res = await admin('export', '--before', cutoff, '--output', out, '--json');
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ sessions: 4, output: out });
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(out, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    expect(lines.map((l) => `se_${l.session_id}`)).toEqual(old.sessions);
    for (const l of lines) {
      expect(l.tenant).toBe('default');
      expect(l.session).toMatchObject({ agent_id: expect.any(String), status: 'ended' });
      // The same record the API shows for the session.
      const detail = await api(daemon, 'GET', `/v1/sessions/se_${l.session_id}`, { key });
      const { tenant: _tenant, calls: _calls, ...shown } = l;
      expect(shown).toEqual(detail.body);
    }
    expect(lines[0]!.turns).toHaveLength(1);
    expect(lines[0]!.turns[0].user_text).toBe('My name is Priya Sharma');
    expect(lines[3]!.calls).toEqual([(await api(daemon, 'GET', `/v1/calls/${old.call}`, { key })).body]);
    expect(lines[0]!.calls).toEqual([]);
    expect(text).not.toMatch(/vk_[A-Za-z0-9]{43}|key_hash|idempotency|auth_sealed|secret/);

    const again = await admin('export', '--before', cutoff, '--output', out);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${out} already exists; nothing was written`);
    expect(fs.readFileSync(out, 'utf8')).toBe(text);
    const forced = await admin('export', '--since', cutoff, '--output', out, '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(
      fs
        .readFileSync(out, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => `se_${(JSON.parse(l) as { session_id: number }).session_id}`),
    ).toEqual([recent]);

    const stdout = await admin('export', '--tenant', 'default');
    expect(stdout.code, stdout.stderr).toBe(0);
    expect(stdout.stdout.trimEnd().split('\n')).toHaveLength(5);
  });

  it('a dry run counts what the purge then deletes and changes nothing; the daemon then answers not_found', async () => {
    const dbFile = path.join(daemon.stateDir, 'vagent.db');
    const exported = (await admin('export')).stdout;
    const dry = await admin('purge', '--before', cutoff, '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const would = JSON.parse(dry.stdout) as { dry_run: boolean; before: string; tenant: null; would_delete: Counts };
    expect(would).toMatchObject({ dry_run: true, before: cutoff, tenant: null });
    expect(would.would_delete).toMatchObject({ sessions: 4, turns: 3, calls: 1 });
    expect((await admin('export')).stdout).toBe(exported);
    expect(fs.existsSync(dbFile)).toBe(true);

    const human = await admin('purge', '--before', cutoff, '--dry-run');
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('Dry run (nothing deleted)');
    expect(human.stdout).toMatch(/^sessions\s+4$/m);
    expect(human.stdout).toMatch(/^session turns\s+3$/m);

    const real = await admin('purge', '--before', cutoff, '--json');
    expect(real.code, real.stderr).toBe(0);
    expect((JSON.parse(real.stdout) as { deleted: Counts }).deleted).toEqual(would.would_delete);

    // The daemon sees the other process's commit within 100 ms.
    await new Promise((resolve) => setTimeout(resolve, 150));
    for (const id of old.sessions) expect((await api(daemon, 'GET', `/v1/sessions/${id}`, { key })).body.error.code).toBe('not_found');
    expect((await api(daemon, 'GET', `/v1/calls/${old.call}`, { key })).status).toBe(404);
    expect((await api(daemon, 'GET', `/v1/sessions/${recent}`, { key })).status).toBe(200);
    const left = await admin('purge', '--before', cutoff, '--dry-run', '--json');
    expect((JSON.parse(left.stdout) as { would_delete: Counts }).would_delete.sessions).toBe(0);
  });

  it('refuses a malformed date, a future cut-off and an unknown tenant (exit 1), and a purge without --before (exit 2)', async () => {
    for (const bad of ['2026-13-01', 'yesterday', '2026-01-01T00:00:00', '2026-02-30']) {
      const res = await admin('purge', '--before', bad, '--dry-run');
      expect(res.code, bad).toBe(1);
      expect(res.stderr).toMatch(/^error: invalid_request: --before must be/m);
      expect(res.stderr).toContain(
        '--before must be a date YYYY-MM-DD (the start of that day in Asia/Kolkata) or an ISO 8601 time with its offset',
      );
    }
    const future = await admin('purge', '--before', '2999-01-01');
    expect(future.code).toBe(1);
    expect(future.stderr).toMatch(/^error: invalid_request: the cut-off 2998-12-31T18:30:00.000Z is in the future/m);
    const unknown = await admin('purge', '--before', '2026-01-01', '--tenant', 'nobody', '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr.trim())).toMatchObject({ error: { code: 'not_found', param: 'tenant' } });
    const missing = await admin('purge', '--dry-run');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--before DATE is required');
    const exportUnknown = await admin('export', '--tenant', 'nobody');
    expect(exportUnknown.code).toBe(1);
    expect(exportUnknown.stdout).toBe('');
  });
});

describe('vagent admin tenant set --retention-days', { timeout: 60_000 }, () => {
  it('sets days, 0 and default, shows them in tenant list and its --json, and refuses other values', async () => {
    const set = await admin('tenant', 'set', 'default', '--retention-days', '90', '--json');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ name: 'default', retention_days: 90 });
    const list = await admin('tenant', 'list');
    expect(list.stdout).toMatch(/RETENTION/);
    expect(list.stdout).toMatch(/^default\s.*90 days$/m);
    expect((await admin('tenant', 'set', 'default', '--retention-days', '0')).stdout).toContain('kept for ever (0)');
    expect(JSON.parse((await admin('tenant', 'list', '--json')).stdout).data[0]).toMatchObject({ retention_days: 0 });
    expect(JSON.parse((await admin('tenant', 'set', 'default', '--retention-days', 'default', '--json')).stdout)).toMatchObject({
      retention_days: null,
    });
    for (const bad of ['-1', '1.5', '36501', 'forever']) {
      const res = await admin('tenant', 'set', 'default', '--retention-days', bad);
      expect(res.code, bad).toBe(1);
      expect(res.stderr).toMatch(/^error: invalid_request: /m);
      expect(res.stderr).toContain('--retention-days must be whole days from 0 (keep for ever) to 36500, or "default"');
    }
    expect(JSON.parse((await admin('tenant', 'show', 'default', '--json')).stdout)).toMatchObject({ retention_days: null });
  });
});

describe('vagent admin tenant set --redact-transcripts', { timeout: 60_000 }, () => {
  it("sets it while the daemon runs: the tenant's next events mask digits; other values are refused", async () => {
    const set = await admin('tenant', 'set', 'default', '--redact-transcripts', 'digits', '--json');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ name: 'default', redact_transcripts: 'digits' });
    expect((await admin('tenant', 'show', 'default')).stdout).toMatch(/transcripts in events:\s+digits masked/);
    // The running daemon sees the change made by another process.
    await new Promise((r) => setTimeout(r, 1200));
    const opened = await api(daemon, 'POST', '/v1/sessions', { key, body: { agent_id: 'ag_clinic_booking' } });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const id = opened.body.session_id as string;
    expect((await api(daemon, 'POST', `/v1/sessions/${id}/turn`, { key, body: { text: 'pay 5000 tomorrow' } })).status).toBe(200);
    const events = await api(daemon, 'GET', `/v1/events?types=session.turn&session_id=${id}`, { key });
    expect(events.body.data[0].data.heard).toBe('pay •••• tomorrow');
    const bad = await admin('tenant', 'set', 'default', '--redact-transcripts', 'all');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: invalid_request: /m);
    expect(bad.stderr).toContain('--redact-transcripts must be off, digits or text');
    expect((await admin('tenant', 'set', 'default', '--redact-transcripts', 'off')).code).toBe(0);
  });
});

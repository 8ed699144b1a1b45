/**
 * Credentials never leak from the real daemon (README.md "Operating the daemon"): a trunk password
 * and an API key (and the SIP username, write-only too) sent through every path — create,
 * idempotent replay, rejected bodies, the CLI — appear in no response, in nothing the daemon prints
 * at log level trace, and in no file of the state dir; nor do the speech recognisers' keys through
 * `/v1/health` and `vagent telephony check`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeDeepgram } from '../../src/devtools/fake-deepgram.js';
import { startFakeSarvam } from '../../src/devtools/fake-sarvam.js';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, type Daemon } from '../support/daemon.js';

/** The regular files under `dir`. */
const filesUnder = (dir: string) =>
  (fs.readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f)).filter((f) => fs.statSync(f).isFile());

let daemon: Daemon;
beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon({ env: { VAGENT_LOG_LEVEL: 'trace' } });
}, 30_000);
afterAll(cleanupAll, 30_000);

describe('secrets through a real daemon at log level trace', () => {
  it('leaves the trunk password and the API key nowhere but the sealed column', { timeout: 60_000 }, async () => {
    const password = `Pa55-${crypto.randomBytes(9).toString('hex')}`;
    const username = `sipuser-${crypto.randomBytes(5).toString('hex')}`;
    const key = await adminKey(daemon.stateDir);
    const responses: string[] = [];
    const record = <T extends { status: number; headers: Headers; body: unknown }>(r: T): T => {
      responses.push(JSON.stringify(r.body), JSON.stringify([...r.headers.entries()]));
      return r;
    };
    const body = { address: 'sip.example-carrier.in', numbers: ['+912240001234'], auth: { username, password } };

    const created = record(await api(daemon, 'POST', '/v1/trunks', { key, body, headers: { 'idempotency-key': 'secret-1' } }));
    expect(created.status).toBe(201);
    expect(created.body.has_credentials).toBe(true);
    const replay = record(await api(daemon, 'POST', '/v1/trunks', { key, body, headers: { 'idempotency-key': 'secret-1' } }));
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    record(
      await api(daemon, 'POST', '/v1/trunks', {
        key,
        body: { ...body, address: 'sip:bad/' },
        headers: { 'idempotency-key': 'secret-2' },
      }),
    );
    record(await api(daemon, 'POST', '/v1/trunks', { key, body: { ...body, auth: { username, password: 42 } } }));
    record(await api(daemon, 'POST', '/v1/trunks', { key, body: { ...body, numbers: [password] } }));
    record(await api(daemon, 'POST', '/v1/trunks', { key: `${key}x`, body }));
    record(await api(daemon, 'GET', '/v1/trunks', { key }));
    record(await api(daemon, 'GET', `/v1/trunks/${created.body.id as string}`, { key }));

    const viaCli = await runCli(
      ['trunk', 'add', '--address', 'sip.example-carrier.in', '--username', username, '--password-stdin', '--json'],
      { input: password, env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key } },
    );
    expect(viaCli.code, viaCli.stderr).toBe(0);
    responses.push(viaCli.stdout, viaCli.stderr);

    // the daemon logged every request at trace level, then stopped cleanly (WAL checkpointed)
    expect(daemon.stdout()).toMatch(/"msg":"request completed"/);
    await daemon.stop('SIGTERM');
    const printed = daemon.stdout() + daemon.stderr();
    const files = (fs.readdirSync(daemon.stateDir, { recursive: true }) as string[])
      .map((f) => path.join(daemon.stateDir, f))
      .filter((f) => fs.statSync(f).isFile());
    expect(files.some((f) => f.endsWith('vagent.db'))).toBe(true);

    for (const secret of [password, key, username]) {
      for (const r of responses) expect(r.includes(secret), `${secret.slice(0, 8)}… in a response`).toBe(false);
      expect(printed.includes(secret), `${secret.slice(0, 8)}… in the daemon output`).toBe(false);
      for (const f of files) {
        const bytes = fs.readFileSync(f);
        expect(bytes.includes(Buffer.from(secret)), `${secret.slice(0, 8)}… in ${path.basename(f)}`).toBe(false);
      }
    }
  });

  it('leaves carrier auth tokens and stream tokens nowhere (the token: its one creation answer)', { timeout: 60_000 }, async () => {
    const carrierDaemon = await startDaemon({ env: { VAGENT_LOG_LEVEL: 'trace' } });
    const key = await adminKey(carrierDaemon.stateDir);
    const twilioToken = `tw${crypto.randomBytes(15).toString('hex')}`;
    const exotelToken = `ex${crypto.randomBytes(19).toString('hex')}`;
    const plivoToken = `pl${crypto.randomBytes(19).toString('hex')}`;
    const responses: string[] = [];
    const record = <T extends { status: number; headers: Headers; body: unknown }>(r: T): T => {
      responses.push(JSON.stringify(r.body), JSON.stringify([...r.headers.entries()]));
      return r;
    };
    const twilio = { auth_token: twilioToken };
    expect(
      record(await api(carrierDaemon, 'PUT', '/v1/carriers/twilio', { key, body: twilio, headers: { 'idempotency-key': 'c-1' } })).status,
    ).toBe(200);
    expect(
      record(
        await api(carrierDaemon, 'PUT', '/v1/carriers/twilio', { key, body: twilio, headers: { 'idempotency-key': 'c-1' } }),
      ).headers.get('idempotency-replayed'),
    ).toBe('true');
    expect(
      record(
        await api(carrierDaemon, 'PUT', '/v1/carriers/twilio', {
          key,
          body: { auth_token: `${twilioToken} ` },
          headers: { 'idempotency-key': 'c-2' },
        }),
      ).status,
    ).toBe(400);
    expect(
      record(await api(carrierDaemon, 'PUT', '/v1/carriers/plivo', { key, body: { auth_id: twilioToken, auth_token: plivoToken } })).status,
    ).toBe(400);
    expect(
      record(
        await api(carrierDaemon, 'PUT', '/v1/carriers/exotel', {
          key: `${key}x`,
          body: { api_key: 'k', api_token: exotelToken },
        }),
      ).status,
    ).toBe(401);
    expect(record(await api(carrierDaemon, 'GET', '/v1/carriers', { key })).status).toBe(200);
    const env = { VAGENT_URL: carrierDaemon.url, VAGENT_API_KEY: key };
    const viaCli = await runCli(['carrier', 'set', 'exotel', '--exotel-api-key', 'exokey', '--api-token-stdin', '--json'], {
      input: exotelToken,
      env,
    });
    expect(viaCli.code, viaCli.stderr).toBe(0);
    responses.push(viaCli.stdout, viaCli.stderr);
    const tokenRun = await runCli(['carrier', 'token'], { env });
    expect(tokenRun.code, tokenRun.stderr).toBe(0);
    const streamToken = tokenRun.stdout.trim();
    expect(streamToken).toMatch(/^vst_/);
    const listed = await runCli(['carrier', 'list', '--json'], { env });
    responses.push(listed.stdout, listed.stderr);

    expect(carrierDaemon.stdout()).toMatch(/"msg":"request completed"/);
    await carrierDaemon.stop('SIGTERM');
    const printed = carrierDaemon.stdout() + carrierDaemon.stderr();
    const files = filesUnder(carrierDaemon.stateDir);
    expect(files.some((f) => f.endsWith('vagent.db'))).toBe(true);
    for (const secret of [twilioToken, exotelToken, plivoToken, streamToken]) {
      for (const r of responses) expect(r.includes(secret), `${secret.slice(0, 8)}… in a response`).toBe(false);
      expect(printed.includes(secret), `${secret.slice(0, 8)}… in the daemon output`).toBe(false);
      for (const f of files)
        expect(fs.readFileSync(f).includes(Buffer.from(secret)), `${secret.slice(0, 8)}… in ${path.basename(f)}`).toBe(false);
    }
  });

  it(
    'leaves the speech recognisers’ keys nowhere: health, the start-up lines, telephony check (a rejected key too)',
    { timeout: 60_000 },
    async () => {
      const dgKey = `dg${crypto.randomBytes(14).toString('hex')}`;
      const svKey = `sv${crypto.randomBytes(14).toString('hex')}`;
      const dg = await startFakeDeepgram({ apiKey: dgKey });
      const sv = await startFakeSarvam({ apiKey: `other-${crypto.randomBytes(6).toString('hex')}` }); // svKey is refused
      try {
        const d = await startDaemon({
          env: {
            VAGENT_LOG_LEVEL: 'trace',
            VAGENT_RECOGNIZER: 'deepgram',
            VAGENT_RECOGNIZERS: 'hi=sarvam',
            DEEPGRAM_API_KEY: dgKey,
            VAGENT_DEEPGRAM_URL: dg.url,
            SARVAM_API_KEY: svKey,
            VAGENT_SARVAM_URL: sv.url,
          },
        });
        const key = await adminKey(d.stateDir);
        const responses: string[] = [];
        const health = await api(d, 'GET', '/v1/health', {});
        responses.push(JSON.stringify(health.body));
        expect(health.body).toMatchObject({ recognition: { status: 'on', provider: 'deepgram' } });
        const langs = (health.body.recognition as { languages: Array<{ range: string; provider: string }> }).languages;
        expect(langs.map((l) => [l.range, l.provider])).toEqual([
          ['*', 'deepgram'],
          ['hi', 'sarvam'],
        ]);
        const check = await api(d, 'GET', '/v1/telephony/check', { key });
        responses.push(JSON.stringify(check.body));
        const env = { VAGENT_URL: d.url, VAGENT_API_KEY: key };
        const human = await runCli(['telephony', 'check'], { env });
        const json = await runCli(['telephony', 'check', '--json'], { env });
        responses.push(human.stdout, human.stderr, json.stdout, json.stderr);
        expect(human.code).toBe(1);
        expect(human.stdout).toMatch(/✔? ?speech recognition: Deepgram accepts the key, \d+ ms \(default\)/);
        expect(human.stdout).toMatch(/speech recognition: Sarvam AI: unauthenticated \(hi\)/);
        expect(human.stdout).toContain('Sarvam AI did not accept the key. Set SARVAM_API_KEY (sarvam.api_key) for vagent serve');
        expect(human.stderr).toMatch(/^error: telephony check failed: not_configured$/m);
        expect(JSON.parse(json.stdout).recognizers.map((x: { provider: string; ok: boolean }) => [x.provider, x.ok])).toEqual([
          ['deepgram', true],
          ['sarvam', false],
        ]);
        await d.stop('SIGTERM');
        const printed = d.stdout() + d.stderr();
        expect(printed).toMatch(/speech recognition: deepgram/);
        for (const secret of [dgKey, svKey]) {
          for (const r of responses) expect(r.includes(secret), `${secret.slice(0, 8)}… in a response`).toBe(false);
          expect(printed.includes(secret), `${secret.slice(0, 8)}… in the daemon output`).toBe(false);
          for (const f of filesUnder(d.stateDir))
            expect(fs.readFileSync(f).includes(Buffer.from(secret)), `${secret.slice(0, 8)}… in ${path.basename(f)}`).toBe(false);
        }
      } finally {
        await dg.close();
        await sv.close();
      }
    },
  );
});

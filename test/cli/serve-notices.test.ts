/**
 * What `vagent serve` and `vagent admin …` tell an operator about the instance (README.md
 * "Operating the daemon"): the login hint names the daemon's real address, start-up says how
 * telephony and the language model are set up (never a secret), a port in use is one clear line, and audit mode warns that
 * tenants are not isolated.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, freePort, requireBuild, runCli, startDaemon, stopAllDaemons, tempDir } from '../support/daemon.js';

beforeAll(requireBuild);
afterEach(stopAllDaemons, 30_000);
afterAll(cleanupAll, 30_000);

/** Daemons here need no audio: without the speech engine they start faster on a busy machine. */
const QUIET = { VAGENT_SPEECH: 'off' };
const AUDIT_WARNING = 'warning: auth_mode is audit: tenants are not isolated';
const count = (text: string, part: string) => text.split(part).length - 1;

describe('the login hint of admin key create', { timeout: 30_000 }, () => {
  it('names the port the daemon of the state dir listens on (--port), not the default 8787', async () => {
    const port = await freePort();
    const d = await startDaemon({ port, env: QUIET });
    const res = await runCli(['admin', 'key', 'create', '--tenant', 'default', '--state-dir', d.stateDir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`vagent login --url http://127.0.0.1:${port} `);
    expect(res.stderr).not.toContain(':8787');
  });

  it("names the daemon's public URL when it has one, at start-up and in admin key create", async () => {
    const d = await startDaemon({ env: { ...QUIET, VAGENT_PUBLIC_URL: 'https://vagent.example.in/' } });
    await d.waitForOutput(/vagent login --url .*$/m);
    expect(d.stderr()).toContain('| vagent login --url https://vagent.example.in --api-key-stdin');
    const res = await runCli(['admin', 'key', 'create', '--tenant', 'default', '--state-dir', d.stateDir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('vagent login --url https://vagent.example.in ');
  });

  it('falls back to the settings given to the command when no daemon recorded its address', async () => {
    const d = await startDaemon({ env: QUIET });
    await d.stop();
    fs.rmSync(path.join(d.stateDir, 'daemon.json'));
    const res = await runCli(['admin', 'key', 'create', '--tenant', 'default', '--state-dir', d.stateDir], {
      env: { VAGENT_PORT: '9123' },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('vagent login --url http://127.0.0.1:9123 ');
  });
});

describe('vagent serve start-up', { timeout: 30_000 }, () => {
  it('says telephony is not configured and how to configure it', async () => {
    const d = await startDaemon({ env: QUIET });
    await d.waitForOutput(/^telephony: .*$/m);
    expect(d.stderr()).toMatch(/^telephony: not configured: .*LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET/m);
  });

  it('names the LiveKit host and the name vagent joins rooms as, never the key or secret', async () => {
    const secret = 'lk-secret-do-not-print-8f3a2c';
    const d = await startDaemon({
      env: {
        ...QUIET,
        LIVEKIT_URL: 'wss://lk.example.in:7880',
        LIVEKIT_API_KEY: 'APIkeyNotPrinted',
        LIVEKIT_API_SECRET: secret,
        VAGENT_LIVEKIT_AGENT_NAME: 'acme-media',
      },
    });
    await d.waitForOutput(/^telephony: .*$/m);
    expect(d.stderr()).toMatch(/^telephony: LiveKit at lk\.example\.in:7880, joining call rooms as "acme-media"/m);
    await d.stop();
    const printed = d.stdout() + d.stderr();
    expect(printed).not.toContain(secret);
    expect(printed).not.toContain('APIkeyNotPrinted');
  });

  it('says llm: off without a model endpoint, and names the model and host with one, never the key', async () => {
    const off = await startDaemon({ env: QUIET });
    await off.waitForOutput(/^llm: .*$/m);
    expect(off.stderr()).toMatch(/^llm: off .*VAGENT_LLM_BASE_URL/m);
    await off.stop();
    const key = 'sk-llm-key-do-not-print-5d1e';
    const on = await startDaemon({
      env: {
        ...QUIET,
        VAGENT_LLM_BASE_URL: 'https://api.groq.com/openai/v1',
        VAGENT_LLM_MODEL: 'llama-3.1-8b-instant',
        VAGENT_LLM_API_KEY: key,
      },
    });
    await on.waitForOutput(/^llm: .*$/m);
    expect(on.stderr()).toMatch(/^llm: llama-3\.1-8b-instant at api\.groq\.com, requests time out after 5000 ms$/m);
    await on.stop();
    expect(on.stdout() + on.stderr()).not.toContain(key);
    expect(on.stdout()).toContain('"llm":"llama-3.1-8b-instant"');
  });

  it('warns when the daemon model has no price (its calls would cost 0); not for a priced one', async () => {
    const unpriced = await startDaemon({
      env: { ...QUIET, VAGENT_LLM_BASE_URL: 'http://127.0.0.1:9/v1', VAGENT_LLM_MODEL: 'qwen2.5-7b-instruct' },
    });
    await unpriced.waitForOutput(/^warning: the daemon's model .*$/m);
    expect(unpriced.stderr()).toMatch(
      /^warning: the daemon's model qwen2\.5-7b-instruct \(llm\.model\) has no price in the price list: its calls will cost 0 .*config\/pricing\.yaml/m,
    );
    await unpriced.stop();
    expect(unpriced.stdout()).toMatch(/"level":40,.*"model":"qwen2\.5-7b-instruct".*has no price/);
    const priced = await startDaemon({ env: { ...QUIET, VAGENT_LLM_BASE_URL: 'http://127.0.0.1:9/v1', VAGENT_LLM_MODEL: 'gpt-4o-mini' } });
    await priced.waitForOutput(/^retention: .*$/m);
    expect(priced.stderr()).not.toContain('has no price');
  });

  it('a base URL without a model: says agents naming no model will not call it', async () => {
    const d = await startDaemon({ env: { ...QUIET, VAGENT_LLM_BASE_URL: 'http://127.0.0.1:9/v1' } });
    await d.waitForOutput(/^llm: .*$/m);
    expect(d.stderr()).toMatch(
      /^llm: no default model at 127\.0\.0\.1:9, .*Only agents whose llm block names a model call it; .*not_configured.*VAGENT_LLM_MODEL/m,
    );
  });

  it('a model or key without a base URL: llm off, and says they are not used (never the key)', async () => {
    const key = 'sk-unused-key-do-not-print-77aa';
    const d = await startDaemon({ env: { ...QUIET, VAGENT_LLM_MODEL: 'gpt-4o-mini', VAGENT_LLM_API_KEY: key } });
    await d.waitForOutput(/^llm: .*$/m);
    expect(d.stderr()).toMatch(
      /^llm: off \(agents answer from their rules only\)\. llm\.model \(VAGENT_LLM_MODEL\) and VAGENT_LLM_API_KEY are set but not used without a base URL\. To enable it, set VAGENT_LLM_BASE_URL/m,
    );
    await d.stop();
    expect(d.stdout() + d.stderr()).not.toContain(key);
  });

  it('a port in use: one line naming the port and --port, exit 1, no stack trace', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const res = await runCli(['serve', '--port', String(port), '--state-dir', path.join(tempDir(), 'state')]);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(new RegExp(`^error: port ${port} is in use: is another vagent serve running\\? \\(--port\\)$`, 'm'));
      expect(res.stderr).not.toMatch(/^\s+at /m);
      expect(res.stderr).not.toContain('EADDRINUSE');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});

describe('audit mode', { timeout: 30_000 }, () => {
  it('vagent serve warns once in audit (the default) and says how to enforce; not in enforce', async () => {
    const a = await startDaemon({ env: QUIET });
    await a.waitForOutput(/^warning: auth_mode .*$/m);
    await a.stop();
    expect(a.stderr()).toContain('auth_mode audit');
    expect(count(a.stderr(), AUDIT_WARNING)).toBe(1);
    expect(a.stderr()).toContain('VAGENT_AUTH_MODE=enforce');
    expect(a.stderr()).toContain('auth_mode: enforce');
    const e = await startDaemon({ env: { ...QUIET, VAGENT_AUTH_MODE: 'enforce' } });
    await e.waitForOutput(/^telephony: .*$/m);
    await e.stop();
    expect(e.stderr()).toContain('auth_mode enforce');
    expect(e.stderr()).not.toContain(AUDIT_WARNING);
  });

  it('admin tenant create warns once when a second tenant exists in audit, not in enforce', async () => {
    const a = await startDaemon({ env: QUIET });
    const res = await runCli(['admin', 'tenant', 'create', 'acme', '--state-dir', a.stateDir]);
    expect(res.code, res.stderr).toBe(0);
    expect(count(res.stderr, AUDIT_WARNING)).toBe(1);
    expect(res.stderr).toContain('VAGENT_AUTH_MODE=enforce');

    // The daemon's recorded mode counts, even when the command itself is given no setting.
    await a.stop();
    const e = await startDaemon({ env: { ...QUIET, VAGENT_AUTH_MODE: 'enforce' } });
    const quiet = await runCli(['admin', 'tenant', 'create', 'acme', '--state-dir', e.stateDir]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain(AUDIT_WARNING);
  });
});

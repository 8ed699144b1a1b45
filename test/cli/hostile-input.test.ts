/**
 * Hostile and mistaken input at the CLI through the built binary: a malformed API key is exit 2
 * and never echoed, wherever it enters; an error quotes a huge value bounded; an output path
 * that cannot be written is refused before any work; a server that is not a vagent daemon is
 * named as such; what the daemon sends is shown with its control characters escaped.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ev, SseServer } from '../support/fake-events.js';
import { cliHome, requireBuild, runCli, tempDir } from '../support/daemon.js';

beforeAll(() => requireBuild());

const SECRET = 'vk_6grESecretPartThatMustNeverBePrinted';
// eslint-disable-next-line no-control-regex -- the control characters no output may hold
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('a malformed API key', { timeout: 30_000 }, () => {
  it('is exit 2 naming where it came from, never quoting it: --api-key, VAGENT_API_KEY, the saved login', async () => {
    const flag = await runCli(['--api-key', `${SECRET}\ndef`, 'session', 'list', '--url', 'http://127.0.0.1:9']);
    const env = await runCli(['session', 'list'], { env: { VAGENT_API_KEY: `${SECRET}\u001b[31m`, VAGENT_URL: 'http://127.0.0.1:9' } });
    const home = cliHome();
    fs.mkdirSync(path.join(home.config, 'vagent'), { recursive: true });
    fs.writeFileSync(
      path.join(home.config, 'vagent', 'credentials.json'),
      JSON.stringify({ keys: { 'http://127.0.0.1:9': `${SECRET} x` } }),
    );
    fs.writeFileSync(path.join(home.config, 'vagent', 'config.json'), JSON.stringify({ url: 'http://127.0.0.1:9', key_store: 'file' }));
    const saved = await runCli(['session', 'list'], { home });
    for (const [res, source] of [
      [flag, '--api-key'],
      [env, 'VAGENT_API_KEY'],
      [saved, 'the login profile'],
    ] as const) {
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(
        `error: the API key from ${source} is malformed (it must be a single line of printable characters: vk_…)`,
      );
      expect(res.stderr + res.stdout).not.toContain('SecretPart');
      expect(res.stderr).not.toContain('cannot reach');
    }
    const json = await runCli(['--api-key', `${SECRET}\ndef`, 'session', 'list', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr.trim()).error.code).toBe('bad_arguments');
    expect(json.stderr).not.toContain('SecretPart');
  });

  it('login --api-key-stdin given the JSON of `admin key create --json` says to take the key out of it', async () => {
    for (const input of [`{\n  "key": "${SECRET}",\n  "tenant": "default"\n}\n`, `{"key":"${SECRET}","tenant":"default"}\n`]) {
      const res = await runCli(['login', '--url', 'http://127.0.0.1:9', '--api-key-stdin'], { input });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain('the API key from stdin is malformed');
      expect(res.stderr).toContain('got JSON: pass the key itself, e.g. `vagent admin key create --json | jq -r .key');
      expect(res.stderr).not.toContain('SecretPart');
    }
  });
});

describe('errors quote values bounded', { timeout: 30_000 }, () => {
  it('a 100 KB --type is quoted by its first 80 characters and its length', async () => {
    const res = await runCli(['events', 'list', '--url', 'http://127.0.0.1:9', '--api-key', 'vk_test', '--type', 'a'.repeat(100_000)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`not "${'a'.repeat(80)}…" (100000 characters)`);
    expect(res.stderr.length).toBeLessThan(400);
  });

  it('an unknown option of 100 KB with escape sequences is bounded and shown escaped', async () => {
    const res = await runCli(['session', 'list', `--x\u001b[31m${'b'.repeat(100_000)}`]);
    expect(res.code).toBe(2);
    expect(res.stderr.length).toBeLessThan(2_500);
    expect(res.stderr).not.toMatch(CONTROL);
    expect(res.stderr).toContain('\\x1b[31m');
  });
});

describe('output paths are checked before the work', { timeout: 30_000 }, () => {
  it('call recording -o into a missing directory: exit 2 before anything is asked of the daemon', async () => {
    const res = await runCli([
      'call',
      'recording',
      'cl_1',
      '-o',
      '/nonexistent/dir/x.wav',
      '--url',
      'http://127.0.0.1:9',
      '--api-key',
      'k',
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /^error: cannot write the recording \/nonexistent\/dir\/x\.wav: the directory \/nonexistent\/dir does not exist$/m,
    );
    const dir = tempDir();
    const isDir = await runCli(['call', 'recording', 'cl_1', '-o', dir, '--url', 'http://127.0.0.1:9', '--api-key', 'k']);
    expect(isDir.code).toBe(2);
    expect(isDir.stderr).toMatch(/: it is a directory$/m);
  });

  it('agent test --junit into a missing directory: exit 2 before any scenario runs, no temp file named', async () => {
    const res = await runCli(['agent', 'test', 'test/fixtures/no-such-scenarios', '--junit', '/nonexistent/dir/x.xml']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /^error: cannot write the JUnit report \/nonexistent\/dir\/x\.xml: the directory \/nonexistent\/dir does not exist$/m,
    );
    expect(res.stderr).not.toContain('.tmp');
  });
});

describe('a server that is not a vagent daemon', { timeout: 30_000 }, () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(req.url?.startsWith('/v1/sessions') ? 404 : 502);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('an empty 404 or 502 is named as not a vagent daemon, not http_404', async () => {
    for (const args of [
      ['session', 'list'],
      ['call', 'list'],
    ]) {
      const res = await runCli([...args, '--url', url, '--api-key', 'vk_test']);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(
        /^error: invalid_response: the server at http:\/\/127\.0\.0\.1:\d+ answered HTTP (404|502) without a vagent error; is it a vagent daemon\?$/m,
      );
    }
  });
});

describe('what the daemon sends is shown, never obeyed', { timeout: 30_000 }, () => {
  it('events list escapes control characters in an event and keeps Hindi and emoji', async () => {
    const s = new SseServer([
      ev(1, 'session.turn', { call_id: null, data: { heard: 'प्रिया 🙂 \u0000\u001b[31mred\u009b2J', layer: 'capture\u0007' } }),
    ]);
    await s.start();
    try {
      const res = await runCli(['events', 'list', '--url', s.url, '--api-key', 'vk_test']);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).not.toMatch(CONTROL);
      expect(res.stdout).toContain('"प्रिया 🙂 \\x00\\x1b[31mred\\x9b2J" capture\\x07');
    } finally {
      await s.kill();
    }
  });
});

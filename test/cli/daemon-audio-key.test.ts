/**
 * The audio key of a real daemon (docs/api-decisions.md "Audio URLs"):
 * `<state-dir>/audio.key` is created 0600, a looser one stops `vagent serve` with a chmod
 * hint, and a new key revokes every audio URL issued under the old one while the cached clip
 * is served under its new name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, stopAllDaemons, tempDir, type Daemon } from '../support/daemon.js';

beforeAll(requireBuild);
afterEach(stopAllDaemons, 30_000);
afterAll(cleanupAll, 30_000);

/** An agents dir with one small agent, so that pre-synthesis is quick. */
function smallAgents(): Record<string, string> {
  const dir = tempDir('vagent-agents-');
  fs.writeFileSync(
    path.join(dir, 'ag_tiny.yaml'),
    [
      'id: ag_tiny',
      'name: Tiny',
      'direction: inbound',
      'language: en-IN',
      'opening:',
      '  - text: "Hello, this is the clinic."',
      'steps:',
      '  - id: ok',
      '    ask: "Shall we go on?"',
      '    capture: { slot: ok, type: yes_no }',
      'closing: "Goodbye."',
      '',
    ].join('\n'),
  );
  return { VAGENT_AGENTS_DIR: dir };
}

/** The path of the first opening clip's audio URL of a new session of `ag_tiny`. */
async function openingClip(d: Daemon, key: string): Promise<string> {
  const s = await api(d, 'POST', '/v1/sessions', { key, body: { agent_id: 'ag_tiny' } });
  expect(s.status).toBe(201);
  const url = s.body.opening.clips[0].audio_url as string | null;
  expect(url).toMatch(/\/v1\/audio\/[0-9a-f]{64}\.wav$/);
  return new URL(url!).pathname;
}

describe('audio.key', { timeout: 120_000 }, () => {
  it('is created 0600; a looser one is refused; a new one revokes old URLs, not the cache', async () => {
    const env = smallAgents();
    const d = await startDaemon({ env });
    const file = path.join(d.stateDir, 'audio.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const key = await adminKey(d.stateDir);
    const before = await openingClip(d, key);
    const wav = await fetch(d.url + before);
    expect(wav.status).toBe(200);
    const bytes = Buffer.from(await wav.arrayBuffer());
    const stopped = await d.stop();
    expect(stopped.code, `stop: ${JSON.stringify(stopped)}\n${d.stderr()}\n${d.stdout().slice(-1500)}`).toBe(0);

    fs.chmodSync(file, 0o644);
    const refused = await runCli(['serve', '--port', '0', '--state-dir', d.stateDir], { timeoutMs: 20_000 });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${file} has mode 644`);
    expect(refused.stderr).toContain(`chmod 600 ${file}`);
    expect(refused.stderr).not.toContain('listening on');
    expect(fs.existsSync(path.join(d.stateDir, 'daemon.lock'))).toBe(false);

    fs.rmSync(file);
    const again = await startDaemon({ stateDir: d.stateDir, env });
    const after = await openingClip(again, key);
    expect(after).not.toBe(before);
    expect((await fetch(again.url + before)).status).toBe(404);
    const served = await fetch(again.url + after);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true); // the same cached clip
  });
});

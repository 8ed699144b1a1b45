/**
 * `vagent trunk rm`, `number rm` and `agent rm` through the built binary (README.md "Removing
 * trunks and numbers"): stdin is never a terminal here, so without `--yes` each is a usage error
 * (exit 2) that deletes nothing; with `--yes` each deletes. The question on a terminal is tested in
 * test/unit/cli-confirm.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, runCli, startDaemonWithKey, tempDir } from '../support/daemon.js';

let env: Record<string, string>;
const vagent = (args: string[]) => runCli(args, { env });

const AGENT = `id: ag_cli_delete_me
name: Delete me
direction: inbound
language: en-IN
opening:
  - text: "Hello."
closing: "Goodbye."
`;
const DID = '+911140009999';

beforeAll(async () => {
  ({ env } = await startDaemonWithKey({ env: { VAGENT_SPEECH: 'off' } }));
}, 30_000);
afterAll(cleanupAll, 30_000);

describe('deletes need --yes without a terminal', { timeout: 60_000 }, () => {
  let trunkId: string;

  beforeAll(async () => {
    const file = path.join(tempDir('vagent-agents-'), 'delete-me.yaml');
    fs.writeFileSync(file, AGENT);
    expect((await vagent(['agent', 'apply', '-f', file, '--no-wait'])).code).toBe(0);
    const trunk = await vagent(['trunk', 'add', '--address', 'sip.example-carrier.in', '--json']);
    trunkId = JSON.parse(trunk.stdout).id as string;
    expect((await vagent(['number', 'add', DID])).code).toBe(0);
  }, 60_000);

  it('refuses each delete with exit 2 naming --yes, and deletes nothing', async () => {
    const attempts = [
      ['trunk', 'rm', trunkId],
      ['number', 'rm', DID],
      ['agent', 'rm', 'ag_cli_delete_me'],
    ];
    for (const args of attempts) {
      const res = await vagent(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(/^error: not deleting (trunk|number|agent) \S+: stdin is not a terminal/m);
      expect(res.stderr).toContain('--yes');
      expect(res.stdout).toBe('');
    }
    const json = await vagent(['agent', 'rm', 'ag_cli_delete_me', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'bad_arguments' } });
    expect((await vagent(['trunk', 'show', trunkId])).code).toBe(0);
    expect(JSON.parse((await vagent(['number', 'list', '--json'])).stdout).data.map((n: { number: string }) => n.number)).toContain(DID);
    expect((await vagent(['agent', 'show', 'ag_cli_delete_me'])).code).toBe(0);
  });

  it('deletes with --yes (or -y)', async () => {
    expect((await vagent(['trunk', 'rm', trunkId, '--yes'])).stdout).toContain(`trunk ${trunkId} removed`);
    expect((await vagent(['number', 'rm', DID, '-y'])).stdout).toContain(`${DID} removed`);
    const agent = await vagent(['agent', 'rm', 'ag_cli_delete_me', '--yes', '--json']);
    expect(JSON.parse(agent.stdout)).toEqual({ id: 'ag_cli_delete_me', deleted: true });
    expect((await vagent(['trunk', 'show', trunkId])).code).toBe(1);
    expect((await vagent(['agent', 'show', 'ag_cli_delete_me'])).code).toBe(1);
  });
});

/**
 * `vagent chat` when the agent ends the call (docs/agents.md "Close grace"), through the built binary
 * against a real daemon: the close-grace window lapsing with no new line, a turn heard in the
 * window (`ended: true`), and a turn that finds the session already ended each print "the
 * agent ended the call" and the summary and exit 0. `/play` with a player that fails prints
 * the audio's URL.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, cleanupAll, cliHome, type Daemon, ROOT, runCli, startDaemonWithKey, tempDir } from '../support/daemon.js';

let daemon: Daemon;
let env: Record<string, string>;
const vagent = (args: string[], input?: string, extra: Record<string, string> = {}) =>
  runCli(args, { env: { ...env, ...extra }, ...(input === undefined ? {} : { input }) });

/** An inbound agent with one step and a close-grace window of `graceMs`. */
const agentYaml = (id: string, graceMs: number) => `id: ${id}
name: Hang-up test
direction: inbound
language: en-IN
opening:
  - text: "What is your name?"
    requires_user_input: true
steps:
  - id: name
    ask: "What is your name?"
    capture: { slot: customer, type: person_name }
    confirm: none
closing: "Goodbye!"
close_grace_ms: ${graceMs}
`;

/** A `vagent chat` whose stdin stays open until the test writes or closes it. */
function openChat(args: string[], extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, 'chat', ...args], {
    cwd: ROOT,
    env: childEnv(cliHome(), { ...env, ...extra }),
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    write: (line: string) => child.stdin.write(`${line}\n`),
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    kill: () => child.kill('SIGKILL'),
    /** Waits (up to 20 s) until stdout matches `re`. */
    async waitFor(re: RegExp): Promise<RegExpMatchArray> {
      for (let i = 0; i < 400; i++) {
        const m = stdout.match(re);
        if (m) return m;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no ${re} in stdout: ${stdout}\nstderr: ${stderr}`);
    },
  };
}

beforeAll(async () => {
  ({ daemon, env } = await startDaemonWithKey());
  const dir = tempDir('vagent-agents-');
  for (const [id, grace] of [
    ['ag_cli_short_grace', 600],
    ['ag_cli_long_grace', 60_000],
  ] as const) {
    const file = path.join(dir, `${id}.yaml`);
    fs.writeFileSync(file, agentYaml(id, grace));
    const res = await vagent(['agent', 'apply', '-f', file, '--no-wait']);
    expect(res.code, res.stderr).toBe(0);
  }
}, 60_000);
afterAll(cleanupAll, 30_000);

/** The end of a chat the agent ended: the line, the summary with the captured name, nothing on stderr but hints. */
function expectAgentEnded(stdout: string, stderr: string): void {
  expect(stdout).toMatch(/^the agent ended the call$/m);
  expect(stdout).toMatch(/^✔ session se_\d+ ended$/m);
  expect(stdout).toMatch(/^outcome:\s+completed/m);
  expect(stdout).toMatch(/^ {2}customer\s+Asha Rao$/m);
  expect(stdout.indexOf('the agent ended the call')).toBeLessThan(stdout.indexOf('outcome:'));
  expect(stderr).not.toMatch(/error/);
}

describe('vagent chat when the agent ends the call', { timeout: 60_000 }, () => {
  it('ends by itself once the close-grace window lapses with no new line (exit 0)', async () => {
    const chat = openChat(['ag_cli_short_grace']);
    try {
      chat.write('Asha Rao');
      await chat.waitFor(/^agent › Goodbye!/m);
      // stdin stays open: only the lapsed window can end the chat.
      expect(await chat.exited).toBe(0);
      expectAgentEnded(chat.stdout(), chat.stderr());
    } finally {
      chat.kill();
    }
  });

  it('a line heard in the window comes back ended: true, and the chat ends there (exit 0)', async () => {
    const res = await vagent(['chat', 'ag_cli_long_grace'], 'Asha Rao\nthank you\nnot sent\n');
    expect(res.code, res.stderr).toBe(0);
    expectAgentEnded(res.stdout, res.stderr);
    expect(res.stdout).not.toContain('not sent');
  });

  it('a line after the session has ended gives the summary, not session_already_ended (exit 0)', async () => {
    const chat = openChat(['ag_cli_long_grace']);
    try {
      const id = (await chat.waitFor(/^session (se_\d+) /m))[1]!;
      chat.write('Asha Rao');
      await chat.waitFor(/^agent › Goodbye!/m);
      // The session closes meanwhile (as when the window lapses on the daemon's side).
      expect((await vagent(['session', 'end', id])).code).toBe(0);
      chat.write('hello?');
      expect(await chat.exited).toBe(0);
      expectAgentEnded(chat.stdout(), chat.stderr());
      expect(chat.stderr()).not.toContain('session_already_ended');
    } finally {
      chat.kill();
    }
  });

  it('--json ends with the end result line after the window lapses', async () => {
    const chat = openChat(['ag_cli_short_grace', '--json']);
    try {
      chat.write('Asha Rao');
      expect(await chat.exited).toBe(0);
      const lines = chat
        .stdout()
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.at(-1)).toMatchObject({ ended: true, summary: { outcome: 'completed', extracted: { customer: 'Asha Rao' } } });
    } finally {
      chat.kill();
    }
  });
});

describe('/play', { timeout: 60_000 }, () => {
  it('a player that fails prints the audio URL, as when there is no player', async () => {
    const bin = tempDir('vagent-bin-');
    fs.writeFileSync(path.join(bin, 'aplay'), '#!/bin/sh\necho "aplay: main: audio open error: No such file or directory" >&2\nexit 1\n', {
      mode: 0o755,
    });
    const res = await vagent(['chat', 'ag_cli_long_grace'], '/play\n/end\n', { PATH: bin });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^could not play it \(aplay exited with status 1: aplay: main: audio open error.*\); the audio is at:$/m);
    expect(res.stdout).toMatch(new RegExp(`^${daemon.url.replace(/\./g, '\\.')}/v1/audio/\\S+\\.wav$`, 'm'));
    expect(res.stderr).not.toMatch(/^error:/m);
  });
});

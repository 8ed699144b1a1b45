/**
 * Ctrl-C in `vagent chat` and `vagent call simulate`, through the built binary against a real
 * daemon: the command winds up as it would at the end (the chat's session ended and summarised,
 * the simulated caller hung up and the call summarised), then exits 130 (128 + SIGINT; README
 * "Exit codes"), not 0. At a terminal the chat's readline sees Ctrl-C as a key (`script` gives
 * it a pseudo-terminal); piped, the command gets the signal.
 */
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, BIN, childEnv, cleanupAll, cliHome, type Daemon, ROOT, startDaemonWithKey } from '../support/daemon.js';

let daemon: Daemon;
let env: Record<string, string>;

beforeAll(async () => {
  ({ daemon, env } = await startDaemonWithKey({ env: { VAGENT_RECOGNIZER: 'fake' } }));
}, 30_000);
afterAll(cleanupAll, 30_000);

/** A running command whose stdin stays open; `until` waits (up to 30 s) for stdout to match. */
function start(file: string, args: string[]) {
  const child = spawn(file, args, { cwd: ROOT, env: childEnv(cliHome(), env), stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  void exited.then(() => clearTimeout(timer));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async until(re: RegExp): Promise<void> {
      for (let i = 0; i < 300 && !re.test(stdout); i++) await new Promise((r) => setTimeout(r, 100));
      if (!re.test(stdout)) throw new Error(`no ${String(re)} in: ${stdout}\n${stderr}`);
    },
  };
}

const sessionStatus = async (id: string): Promise<unknown> => {
  const res = await api(daemon, 'GET', `/v1/sessions/${id}`, { key: env.VAGENT_API_KEY! });
  return (res.body.session as { status: string }).status;
};

describe('Ctrl-C exits 130 after the summary', { timeout: 90_000 }, () => {
  it('vagent chat, piped: the session is ended and summarised, exit 130', async () => {
    const chat = start(process.execPath, [BIN, 'chat', 'ag_clinic_booking']);
    chat.child.stdin.write('Priya Sharma\n');
    await chat.until(/Priya Sharma, right\?/);
    chat.child.kill('SIGINT');
    expect(await chat.exited, chat.stderr()).toBe(130);
    const id = /session (se_\w+) ended/.exec(chat.stdout())?.[1];
    expect(id, chat.stdout()).toBeDefined();
    expect(chat.stdout()).toMatch(/outcome:/);
    expect(chat.stderr()).toContain('interrupted (Ctrl-C)');
    expect(await sessionStatus(id!)).toBe('ended');
  });

  it('vagent chat at a terminal: Ctrl-C at the prompt ends the session, prints the summary, exit 130', async () => {
    if (spawnSync('script', ['--version']).status !== 0) throw new Error('util-linux script is needed for a pseudo-terminal');
    // script -e returns the command's exit code; -q keeps its own lines out.
    const chat = start('script', ['-qec', `${process.execPath} ${BIN} chat ag_clinic_booking`, '/dev/null']);
    await chat.until(/you\s+›/);
    chat.child.stdin.write('\u0003');
    expect(await chat.exited, chat.stdout()).toBe(130);
    expect(chat.stdout()).toMatch(/session se_\w+ ended/);
    expect(chat.stdout()).toContain('interrupted (Ctrl-C)');
  });

  it('vagent call simulate: the caller hangs up, the summary is printed, exit 130', async () => {
    const sim = start(process.execPath, [
      BIN,
      'call',
      'simulate',
      'ag_clinic_booking',
      '--say',
      'Priya Sharma',
      '--say',
      'yes',
      '--say',
      'tomorrow',
      '--timeout-s',
      '60',
    ]);
    await sim.until(/caller\s+Priya Sharma/);
    sim.child.kill('SIGINT');
    expect(await sim.exited, sim.stderr()).toBe(130);
    expect(sim.stdout()).toContain('the caller hung up');
    const id = /session:\s+(se_\w+)/.exec(sim.stdout())?.[1];
    expect(id, sim.stdout()).toBeDefined();
    expect(sim.stderr()).toContain('interrupted (Ctrl-C): the caller hung up');
    expect(await sessionStatus(id!)).toBe('ended');
  });
});

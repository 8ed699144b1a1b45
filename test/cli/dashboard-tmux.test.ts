/**
 * `vagent dashboard` on a real terminal: the built binary runs in a tmux pane (120×40, then
 * 80×24) against a real daemon with the fake recogniser, while calls are placed (prepare-only
 * `POST /v1/calls`, a text turn on one's session, an API hang-up of another) and one is
 * simulated with `vagent call simulate`. The screen is read with `tmux capture-pane -p`, polled
 * until it shows what is expected: each call with its agent and step progress, a turn's heard
 * text and reply, an ended call's end reason, the call view's transcript and events, the list
 * redrawn for a smaller terminal, and on `q` the shell's screen back (the alternate screen left).
 *
 * tmux is required (install.sh installs it with apt-get where it can): without it this test
 * fails, saying so. The tmux server is a private one (its own socket in a temp dir), killed at
 * the end.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY, EMI } from '../support/agents.js';
import { api, BIN, childEnv, cleanupAll, cliHome, ROOT, runCli, startDaemonWithKey, tempDir, type Daemon } from '../support/daemon.js';

const SESSION = 'dash';
let daemon: Daemon;
let env: Record<string, string>;
let socket = '';
let tmuxEnv: NodeJS.ProcessEnv;

/** Runs `tmux -S <socket> …args` and returns its stdout. */
function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-S', socket, ...args], { env: tmuxEnv, encoding: 'utf8', timeout: 10_000 });
}

/** The pane's text as shown now, one string per screen row. */
const screen = (): string[] => tmux('capture-pane', '-p', '-t', SESSION).replace(/\n$/, '').split('\n');

/** Polls the screen every 200 ms until `ok` holds for it; fails with `what` and the last screen after `timeoutMs`. */
async function waitForScreen(what: string, ok: (lines: string[]) => boolean, timeoutMs = 15_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let lines: string[] = [];
  for (;;) {
    lines = screen();
    if (ok(lines)) return lines;
    if (Date.now() > deadline) throw new Error(`the screen did not show ${what} within ${timeoutMs} ms; it shows:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The list row of the call whose masked number or agent is `key`, when shown. */
const rowOf = (lines: string[], key: string): string | undefined => lines.find((l) => l.includes(key));

/** A word for a POSIX shell, in single quotes. */
const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

beforeAll(async () => {
  const version = spawnSync('tmux', ['-V'], { encoding: 'utf8' });
  if (version.error || version.status !== 0)
    throw new Error(
      'tmux is not installed, and this test runs `vagent dashboard` in it: run ./install.sh (it installs tmux with ' +
        'apt-get where apt-get and root are available) or install tmux yourself (sudo apt-get install tmux)',
    );
  ({ daemon, env } = await startDaemonWithKey({ env: { VAGENT_RECOGNIZER: 'fake' } }));
  socket = path.join(tempDir('vagent-tmux-'), 'tmux.sock');
  // The tmux server, and so the pane's shell, get this environment: a private HOME, the daemon's
  // URL and key, a plain prompt.
  tmuxEnv = childEnv(cliHome(), { ...env, PS1: '$ ', TERM: 'xterm-256color', TMUX: undefined });
  tmux('-f', '/dev/null', 'new-session', '-d', '-x', '120', '-y', '40', '-s', SESSION, '-c', ROOT, 'sh');
}, 60_000);

afterAll(async () => {
  if (socket) {
    // A dashboard still running (a failed test) is stopped by its pid, the child of the pane's
    // shell, before the server goes: a hung-up terminal alone does not always end it.
    const shell = spawnSync('tmux', ['-S', socket, 'list-panes', '-t', SESSION, '-F', '#{pane_pid}'], { env: tmuxEnv, encoding: 'utf8' });
    const children = spawnSync('ps', ['-o', 'pid=', '--ppid', shell.stdout.trim() || '0'], { encoding: 'utf8' });
    for (const pid of children.stdout.split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
    spawnSync('tmux', ['-S', socket, 'kill-server'], { env: tmuxEnv });
  }
  await cleanupAll();
}, 30_000);

describe('vagent dashboard in tmux against a real daemon', { timeout: 90_000 }, () => {
  it('shows the calls live, turn by turn and ended with their reason, follows a resize to 80×24, and q gives the shell back', async () => {
    const key = env.VAGENT_API_KEY!;
    const command = `printf 'before-%s\\n' dashboard; ${quote(process.execPath)} ${quote(BIN)} dashboard; echo "dashboard exited $?"`;
    tmux('send-keys', '-t', SESSION, '-l', command);
    tmux('send-keys', '-t', SESSION, 'Enter');

    let lines = await waitForScreen(
      'the empty list, live',
      (l) => l[0]!.includes('● live') && l.some((x) => x.includes('No calls in progress')),
    );
    expect(lines[0]).toMatch(/^vagent ● live http:\/\/127\.0\.0\.1:\d+ /);
    expect(
      lines.some((l) => l.includes('before-dashboard')),
      'the dashboard draws on the alternate screen',
    ).toBe(false);

    // Two prepare-only calls; a text turn on the first one's session.
    const a = await api(daemon, 'POST', '/v1/calls', { key, body: { ...EMI, to: '+919876543210' } });
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    const b = await api(daemon, 'POST', '/v1/calls', { key, body: { ...DELIVERY, to: '+919812345678' } });
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    lines = await waitForScreen('both prepared calls, waiting', (l) => !!rowOf(l, '+91987•••3210') && !!rowOf(l, '+91981•••5678'));
    expect(rowOf(lines, '+91987•••3210')).toMatch(/^. out +\+91987•••3210 +emi_reminder +- +\d+:\d\d +waiting/);
    expect(rowOf(lines, '+91981•••5678')).toMatch(/^. out +\+91981•••5678 +delivery_confir… +- +\d+:\d\d +waiting/);
    expect(lines[1]).toMatch(/calls 2 active · 2 today/);

    const turn = await api(daemon, 'POST', `/v1/sessions/${a.body.session_id}/turn`, { key, body: { text: 'yes speaking' } });
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    lines = await waitForScreen('the turn of the first call', (l) =>
      /"yes speaking" → Okay\. Thank you\./.test(rowOf(l, '+91987•••3210') ?? ''),
    );
    expect(rowOf(lines, '+91987•••3210')).toMatch(
      /emi_reminder +1\/4 +\d+:\d\d +"yes speaking" → Okay\. Thank you\. .*… capture +(\d+ms|\d+\.\ds) +₹0\.00/,
    );

    // The second call hung up through the API: ended, with its reason.
    expect((await api(daemon, 'POST', `/v1/calls/${b.body.call_id}/hangup`, { key })).status).toBe(200);
    lines = await waitForScreen('the hung-up call ended', (l) => (rowOf(l, '+91981•••5678') ?? '').includes('ended: api_hangup'));
    expect(lines[1]).toMatch(/calls 1 active · 2 today/);

    // A simulated inbound call: the fake recogniser hears the line, the agent reads it back, the
    // caller hangs up when the time is up.
    const simulated = runCli(['call', 'simulate', 'ag_clinic_booking', '--say', 'Priya Sharma', '--timeout-s', '15'], {
      env,
      timeoutMs: 45_000,
    });
    await waitForScreen(
      'the simulated call with its heard text and reply',
      (l) =>
        /^. in +- +clinic_booking +0\/5 +\d+:\d\d +"Priya Sharma" → That is Priya Sharma, right\? +capture /.test(
          rowOf(l, 'clinic_booking') ?? '',
        ),
      30_000,
    );
    const sim = await simulated;
    expect(sim.code, sim.stderr).toBe(0);
    lines = await waitForScreen('the simulated call ended', (l) => (rowOf(l, 'clinic_booking') ?? '').includes('ended: caller_hung_up'));
    expect(lines[1]).toMatch(/calls 1 active · 3 today/);

    // The call view of the simulated call (filtered to it, then opened): its transcript and events.
    tmux('send-keys', '-t', SESSION, '-l', '/clinic');
    await waitForScreen('the filter typed', (l) => l.some((x) => x.startsWith('filter: clinic')));
    tmux('send-keys', '-t', SESSION, 'Enter');
    await waitForScreen('the list filtered to the simulated call', (l) => !rowOf(l, '+91987•••3210') && !!rowOf(l, 'clinic_booking'));
    tmux('send-keys', '-t', SESSION, 'Enter');
    lines = await waitForScreen('the call view', (l) => l.some((x) => x.includes('call.ended')));
    const view = lines.join('\n');
    expect(view).toMatch(/^cl_\d+ inbound - ag_clinic_booking steps 0\/5 .* ended: caller_hung_up/m);
    expect(view).toMatch(/caller: Priya Sharma$/m);
    expect(view).toMatch(/agent: That is Priya Sharma, right\? \[capture (\d+ms|\d+\.\ds) ₹0\.00\]/);
    expect(view).toMatch(/call\.ended evt_\d+ caller_hung_up/);
    tmux('send-keys', '-t', SESSION, 'Escape');
    await waitForScreen('the filtered list again', (l) => l.some((x) => x.includes('filter "clinic"')));
    tmux('send-keys', '-t', SESSION, 'Escape');
    await waitForScreen('the whole list again', (l) => !!rowOf(l, '+91987•••3210') && !!rowOf(l, 'clinic_booking'));

    // 80×24: the same calls in narrower columns, the whole frame on the screen.
    tmux('resize-window', '-t', SESSION, '-x', '80', '-y', '24');
    lines = await waitForScreen('the list redrawn at 80×24', (l) => !!rowOf(l, 'clinic_bo…') && l.length === 24);
    expect(lines[0]).toMatch(/^vagent ● live /);
    expect(lines[3]).toMatch(/^ {2}DIR NUMBER {8}AGENT {6}STEP TIME {3}HEARD → REPLY/);
    expect(rowOf(lines, '+91987•••3210')).toMatch(/emi_remin… 1\/4 /);
    expect(rowOf(lines, '+91981•••5678')).toContain('ended: api_');
    expect(lines.findIndex((l) => l.includes('q quit'))).toBe(22);
    expect(lines.join('\n')).not.toMatch(/clinic_booking|HEARD → REPLY {10}/);

    // q: the dashboard exits 0 and the shell's screen is back as it was.
    tmux('send-keys', '-t', SESSION, 'q');
    lines = await waitForScreen('the shell after q', (l) => l.some((x) => x === 'dashboard exited 0'));
    expect(lines.join('\n')).toMatch(/^before-dashboard$/m);
    expect(lines.join('\n')).not.toMatch(/● live|HEARD → REPLY|q quit/);
    expect(tmux('display-message', '-p', '-t', SESSION, '#{alternate_on}').trim()).toBe('0');
  });
});

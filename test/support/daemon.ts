/**
 * Test harness for the CLI tests (README.md "Tests, lint, benchmarks"): the built binary
 * (`bin/vagent` → `dist/`), spawned as a real daemon on a random loopback port and as one-shot CLI
 * commands, each with temp XDG/HOME dirs so that no test touches the real home, profile or
 * keychain.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pocketsphinxStatus } from '../../src/adapters/recognizers/pocketsphinx.js';

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The executable under test. */
export const BIN = path.join(ROOT, 'bin', 'vagent');
const MAIN_JS = path.join(ROOT, 'dist', 'cli', 'main.js');

/** Fails with a clear message when `dist/` has not been built (call it in a `beforeAll`). */
export function requireBuild(): void {
  if (!fs.existsSync(MAIN_JS)) {
    throw new Error(
      `${MAIN_JS} is missing: the CLI tests run the built binary. ` + 'Run `npm run build` first (`npm test` does it in its pretest step).',
    );
  }
}

const tempDirs = new Set<string>();

/** A temp dir removed by {@link cleanupAll}. */
export function tempDir(prefix = 'vagent-cli-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** A private HOME with XDG config and data dirs under it (the CLI profile lives in `config`). */
export interface CliHome {
  home: string;
  config: string;
  data: string;
}

/** A fresh {@link CliHome}. */
export function cliHome(): CliHome {
  const home = tempDir('vagent-home-');
  const h = { home, config: path.join(home, 'config'), data: path.join(home, 'data') };
  fs.mkdirSync(h.config, { recursive: true });
  fs.mkdirSync(h.data, { recursive: true });
  return h;
}

/**
 * The environment of a spawned process: the test's own, without any `VAGENT_*`/`LIVEKIT_*`
 * setting or colour forcing, with HOME and XDG dirs in `home`, and a D-Bus address that leads
 * nowhere so that `@napi-rs/keyring` cannot reach a real keychain.
 */
export function childEnv(home: CliHome, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(VAGENT_|LIVEKIT_)/.test(k) || ['NO_COLOR', 'FORCE_COLOR', 'CI', 'NODE_OPTIONS'].includes(k)) continue;
    env[k] = v;
  }
  Object.assign(env, {
    HOME: home.home,
    XDG_CONFIG_HOME: home.config,
    XDG_DATA_HOME: home.data,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${path.join(home.home, 'no-dbus')}`,
  });
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** What a finished command printed and how it exited. */
export interface CliResult {
  /** Exit code; null when it was killed (signal or {@link RunOptions.timeoutMs}). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runCli}. */
export interface RunOptions {
  /** Extra environment; `undefined` values remove a variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (stdin is always closed, never a TTY). */
  input?: string;
  /** Profile/home dirs to use; a fresh one per call when omitted. */
  home?: CliHome;
  /** Kill the command after this long (default 20 s) and report code null. */
  timeoutMs?: number;
}

/** Runs `node bin/vagent …args` to completion. */
export function runCli(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  const home = opts.home ?? cliHome();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(home, opts.env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    const timer = setTimeout(() => {
      stderr += `\n[harness: killed after ${opts.timeoutMs ?? 20_000} ms]`;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 20_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {
      /* the command may exit without reading stdin */
    });
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * Creates an API key with `vagent admin key create --tenant T --state-dir D --json`.
 * @returns the key (`vk_…`).
 */
export async function adminKey(stateDir: string, tenant = 'default'): Promise<string> {
  const res = await runCli(['admin', 'key', 'create', '--tenant', tenant, '--state-dir', stateDir, '--json']);
  if (res.code !== 0) throw new Error(`admin key create failed (${res.code}): ${res.stderr}`);
  return (JSON.parse(res.stdout) as { key: string }).key;
}

/**
 * A daemon ({@link startDaemon}, after {@link requireBuild}) with an API key of tenant `default`,
 * and the environment that points CLI commands at it (`VAGENT_URL`, `VAGENT_API_KEY`).
 */
export async function startDaemonWithKey(opts: DaemonOptions = {}): Promise<{ daemon: Daemon; env: Record<string, string> }> {
  requireBuild();
  const daemon = await startDaemon(opts);
  return { daemon, env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: await adminKey(daemon.stateDir) } };
}

/**
 * {@link startDaemonWithKey} hearing callers with the embedded recogniser (Debian's pocketsphinx,
 * which install.sh installs): the tests of real speech cannot make their claim without it.
 * @throws Error naming how to install it when it is missing
 */
export async function startEmbeddedDaemon(): Promise<{ daemon: Daemon; env: Record<string, string> }> {
  const status = pocketsphinxStatus();
  if (!status.available) throw new Error(`the embedded recogniser is needed here: ${status.reason}`);
  return startDaemonWithKey({ env: { VAGENT_RECOGNIZER: 'pocketsphinx' } });
}

/** A free TCP port on 127.0.0.1 (free when this returns). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A `vagent serve` process that has printed its listening line. */
export interface Daemon {
  /** `http://127.0.0.1:<port>` from the listening line. */
  url: string;
  port: number;
  stateDir: string;
  proc: ChildProcess;
  pid: number;
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited and its output is closed. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (default SIGTERM) and waits for the exit (SIGKILL after 10 s). */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits (up to `timeoutMs`) until `stream` matches `re`. */
  waitForOutput(re: RegExp, stream?: 'stdout' | 'stderr', timeoutMs?: number): Promise<RegExpMatchArray>;
}

/** Options of {@link startDaemon}. */
export interface DaemonOptions {
  env?: Record<string, string | undefined>;
  /** Extra arguments after `serve`. */
  args?: string[];
  /** Reuse this state dir (a restart); a fresh temp one when omitted. */
  stateDir?: string;
  /** `--port` value; default 0 (any free port); null passes no `--port` flag. */
  port?: number | null;
  home?: CliHome;
}

const daemons = new Set<Daemon>();
const LISTENING = /vagent \S+ listening on (http:\/\/127\.0\.0\.1:(\d+))/;

/**
 * Spawns `node bin/vagent serve --port 0 --state-dir <tmp>` and waits (up to 10 s) for the
 * `listening on http://127.0.0.1:<port>` line on stderr.
 * @throws Error with the process's output when it exits or stays silent instead.
 */
export async function startDaemon(opts: DaemonOptions = {}): Promise<Daemon> {
  const stateDir = opts.stateDir ?? path.join(tempDir('vagent-state-'), 'state');
  const port = opts.port === undefined ? 0 : opts.port;
  const args = ['serve', '--state-dir', stateDir, ...(port === null ? [] : ['--port', String(port)]), ...(opts.args ?? [])];
  const proc = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv(opts.home ?? cliHome(), opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of listeners) l();
  };
  proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
    out += s;
    notify();
  });
  proc.stderr!.setEncoding('utf8').on('data', (s: string) => {
    err += s;
    notify();
  });
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('close', (code, signal) => {
      done = true;
      notify();
      resolve({ code, signal });
    });
  });

  const waitForOutput = (re: RegExp, stream: 'stdout' | 'stderr' = 'stderr', timeoutMs = 10_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = (stream === 'stdout' ? out : err).match(re);
        if (m) finish(() => resolve(m));
        else if (done)
          finish(() => reject(new Error(`vagent serve exited before printing ${re}\nstderr: ${err}\nstdout: ${out.slice(-2000)}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no ${re} on ${stream} within ${timeoutMs} ms\nstderr: ${err}`))),
        timeoutMs,
      );
      const finish = (f: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        f();
      };
      listeners.add(check);
      check();
    });

  const daemon: Daemon = {
    url: '',
    port: 0,
    stateDir,
    proc,
    pid: proc.pid!,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForOutput,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (!done) proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      const result = await exited;
      clearTimeout(timer);
      daemons.delete(daemon);
      return result;
    },
  };
  daemons.add(daemon);
  try {
    // Generous: with two test files at a time on two cores, a daemon starting beside other
    // daemons' media workers and recognisers has taken over 10 s to listen.
    const m = await waitForOutput(LISTENING, 'stderr', 30_000);
    daemon.url = m[1]!;
    daemon.port = Number(m[2]);
  } catch (e) {
    await daemon.stop('SIGKILL');
    throw e;
  }
  return daemon;
}

/** Stops every daemon still running (SIGTERM, then SIGKILL). For `afterAll`/`afterEach`. */
export async function stopAllDaemons(): Promise<void> {
  await Promise.all([...daemons].map((d) => d.stop()));
}

/** Stops every daemon and removes every temp dir made here. For `afterAll`. */
export async function cleanupAll(): Promise<void> {
  await stopAllDaemons();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** `fetch` against a daemon with an optional API key; returns status, headers and parsed JSON. */
export async function api(
  daemon: Pick<Daemon, 'url'>,
  method: string,
  route: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(daemon.url + route, {
    method,
    headers,
    signal: AbortSignal.timeout(10_000),
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as any };
}

/** True when `s` holds an ANSI escape sequence. */
export const hasAnsi = (s: string): boolean => s.includes('\u001b[');

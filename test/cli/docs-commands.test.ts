/**
 * Every command the README and docs/*.md show, run as an operator would run it, in the order
 * written: each fenced `sh` block's commands go through bash (so quoting, pipes and `$(…)` are
 * the shell's own) against a real daemon on a loopback port with a temp state dir and HOME.
 * What needs an outside service runs against the fakes the repository ships: the daemon dials
 * through the development fake LiveKit (src/devtools/fake-livekit.ts) and hears with the fake
 * recogniser. A command that cannot run here is named in CHECK_ONLY below with its reason, and
 * its command line is still checked against the CLI's commander definitions (an unknown flag, a
 * missing argument or required flag fails the test) by test/support/vagent-argv-check.mjs.
 *
 * Each file starts where the README leaves an operator: logged in (the README's own `vagent
 * login`), with no trunks and no numbers; within a file, commands share the variables they set
 * (`EMI=…`, `CALL=$(…)`), and SUBSTITUTIONS fill the placeholders the docs write for ids.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { docCommands, docFiles, type DocCommand } from '../support/doc-commands.js';
import {
  adminKey,
  api,
  childEnv,
  cleanupAll,
  cliHome,
  requireBuild,
  ROOT,
  startDaemon,
  tempDir,
  type CliHome,
  type Daemon,
} from '../support/daemon.js';

/** A documented command that is not run, only checked: where it is, and why. Reviewed by hand. */
interface CheckOnly {
  file: string;
  command: RegExp;
  reason: string;
}

const THE_DAEMON = "the test's daemon is this `vagent serve`, started by the harness on a free port with a temp state dir";
const REAL_TIME_CALL = 'a whole call at real-time pacing (a minute or more of audio); the same lines run in test/cli/call-simulate.test.ts';
const CHECK_ONLY: CheckOnly[] = [
  {
    file: 'README.md',
    command: /^\.\/install\.sh$/,
    reason: 'installs into the machine; run with a temp HOME and npm prefix by test/cli/install.test.ts',
  },
  { file: 'README.md', command: /^vagent serve$/, reason: THE_DAEMON },
  {
    file: 'README.md',
    command: /^vagent login --url \S+$/,
    reason: 'a hidden prompt on a terminal (typed into by test/cli/operator.test.ts); the piped login below it runs',
  },
  {
    file: 'README.md',
    command: /^vagent number rm \+\d+$/,
    reason: 'asks on a terminal, and the test has none (answered on one by test/cli/operator.test.ts); the --yes form runs',
  },
  {
    file: 'README.md',
    command: /^npm (test|run (lint|typecheck|bench|bench:smoke|eval))$/,
    reason: 'the test suite, linters and benchmarks themselves (minutes each)',
  },
  ...(['README.md', 'docs/llm.md'] as const).flatMap((file) => [
    {
      file,
      command: /^npm run fake-llm$/,
      reason: 'serves until stopped; test/cli/llm-chat.test.ts runs the same fake on a free port with a daemon pointed at it',
    },
    {
      file,
      command: /^VAGENT_LLM_BASE_URL=http:\/\/127\.0\.0\.1:8790\/v1 VAGENT_LLM_MODEL=fake-llm vagent serve$/,
      reason: `${THE_DAEMON} (no model: the chat line that follows gets the re-prompt here, the model's answer in test/cli/llm-chat.test.ts)`,
    },
  ]),
  {
    file: 'README.md',
    command: /^npm run fake-livekit$/,
    reason: 'the same fake LiveKit runs in this test, started in-process (startFakeLiveKit) on a free port',
  },
  {
    file: 'README.md',
    command: /^vagent call simulate ag_clinic_booking\s+--say "My name is Priya Patel" --say "yes"/,
    reason:
      'a whole call at real-time pacing with the embedded recogniser; run as written, with --strict, by test/cli/call-simulate-strict.test.ts',
  },
  {
    file: 'README.md',
    command: /^vagent dashboard$/,
    reason: 'a full-screen terminal UI that runs until q; its frames are read by test/unit/dashboard-view.test.ts',
  },
  {
    file: 'README.md',
    command: /^vagent events tail( |$)/,
    reason: 'follows the stream until Ctrl-C; run to its end by test/cli/events.test.ts (a restart, Ctrl-C)',
  },
  {
    file: 'README.md',
    command: /^vagent webhook (add https:\/\/crm\.example\.in\/|test we_…)/,
    reason: 'a receiver on the public internet (run against a loopback receiver by test/cli/webhooks.test.ts)',
  },
  { file: 'docs/calls.md', command: /^vagent serve$/, reason: THE_DAEMON },
  {
    file: 'docs/calls.md',
    command: /^npm run fake-livekit /,
    reason: 'the same fake LiveKit runs in this test, started in-process (startFakeLiveKit) on a free port',
  },
  { file: 'docs/media.md', command: /^vagent serve$/, reason: THE_DAEMON },
  {
    file: 'docs/media.md',
    command: /^VAGENT_RECOGNIZER=fake vagent serve$/,
    reason: `${THE_DAEMON}, hearing with the fake recogniser`,
  },
  {
    file: 'docs/media.md',
    command: /^curl -s https:\/\/vagent\.example\.in\//,
    reason: 'a daemon behind a public reverse proxy',
  },
  { file: 'docs/media.md', command: /--url https:\/\/vagent\.example\.in/, reason: 'a daemon behind a public reverse proxy' },
  { file: 'docs/media.md', command: /^sudo apt-get install /, reason: 'installs system packages' },
  {
    file: 'docs/media.md',
    command: /^curl -s -X POST "https:\/\/api\.(twilio|in\.exotel|plivo)\.com\//,
    reason: "a carrier's own API, with a real account",
  },
  {
    file: 'docs/media.md',
    command: /^npm run fake-livekit -- --callee /,
    reason: 'the same fake LiveKit runs in this test, started in-process',
  },
  {
    file: 'docs/media.md',
    command: /^vagent call simulate ag_clinic_booking --(say "My name is Priya Patel" --say "yes"|transport twilio)/,
    reason: REAL_TIME_CALL,
  },
  {
    file: 'docs/media.md',
    command: /^vagent (admin tenant set acme-collections --recording mono|call recording cl_42 -o call\.wav)$/,
    reason: 'a tenant and a recorded call of its own: test/cli/call-recording.test.ts sets a tenant recording and saves a recorded call',
  },
];

/** Placeholders the docs write, and what a test run puts in their place. */
const SUBSTITUTIONS = [
  { from: 'http://127.0.0.1:8787', to: 'the daemon URL (the docs show the default port; the test daemon has a free one)' },
  { from: 'tk_…', to: 'the newest trunk' },
  { from: 'cl_…', to: 'the newest call' },
  { from: 'se_…', to: 'the newest session' },
] as const;

/** What the docs' commands read from the environment: secrets an operator exports first. */
const SECRETS = {
  SIP_PASSWORD: 'docs-sip-password',
  TWILIO_AUTH_TOKEN: 'docs-twilio-token',
  PLIVO_AUTH_TOKEN: 'docs-plivo-token',
  EXOTEL_API_TOKEN: 'docs-exotel-token',
  EXOTEL_API_KEY: 'docs-exotel-key',
};

let fake: FakeLiveKit;
let daemon: Daemon;
let key: string;
let operator: CliHome;
let work: string;
let shims: { run: string; check: string };
let argvLog: string;

beforeAll(async () => {
  requireBuild();
  fake = await startFakeLiveKit();
  daemon = await startDaemon({
    env: {
      LIVEKIT_URL: fake.url,
      LIVEKIT_API_KEY: fake.apiKey,
      LIVEKIT_API_SECRET: fake.apiSecret,
      VAGENT_DEV_FAKE_ROOMS: '1',
      VAGENT_RECOGNIZER: 'fake',
    },
  });
  fake.webhookUrl = `${daemon.url}/v1/telephony/livekit/webhook`;
  key = await adminKey(daemon.stateDir);
  operator = cliHome();
  // The operator's directory: a checkout's files as the docs name them (config/agents/…, dist/…, bin/).
  work = tempDir('vagent-docs-work-');
  for (const name of ['config', 'dist', 'bin']) fs.symlinkSync(path.join(ROOT, name), path.join(work, name));
  const shimDir = (name: string, target: string[]) => {
    const dir = path.join(tempDir('vagent-docs-bin-'), name);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'vagent'), `#!/bin/sh\nexec ${target.map((t) => `"${t}"`).join(' ')} "$@"\n`, {
      mode: 0o755,
    });
    return dir;
  };
  shims = {
    run: shimDir('run', [process.execPath, path.join(ROOT, 'bin', 'vagent')]),
    check: shimDir('check', [process.execPath, path.join(ROOT, 'test', 'support', 'vagent-argv-check.mjs')]),
  };
  argvLog = path.join(tempDir('vagent-docs-log-'), 'argv.jsonl');
}, 90_000);
afterAll(async () => {
  await cleanupAll();
  await fake?.close();
}, 30_000);

/** The newest id of a list endpoint's items, for a placeholder: calls and sessions are listed newest first, trunks oldest first. */
async function newest(route: string, field: string, order: 'newest first' | 'oldest first'): Promise<string | undefined> {
  const data = ((await api(daemon, 'GET', route, { key })).body?.data ?? []) as Array<Record<string, unknown>>;
  return (order === 'newest first' ? data[0] : data.at(-1))?.[field] as string | undefined;
}

/** The command with its placeholders filled (see {@link SUBSTITUTIONS}). */
async function substitute(text: string): Promise<string> {
  let out = text.replaceAll('http://127.0.0.1:8787', daemon.url);
  const ids: Array<[string, () => Promise<string | undefined>]> = [
    ['tk_…', () => newest('/v1/trunks', 'id', 'oldest first')],
    ['cl_…', () => newest('/v1/calls', 'call_id', 'newest first')],
    ['se_…', () => newest('/v1/sessions', 'session_id', 'newest first')],
  ];
  for (const [placeholder, find] of ids) if (out.includes(placeholder)) out = out.replaceAll(placeholder, (await find()) ?? placeholder);
  return out;
}

/** Each file starts with no trunks and no numbers (the login stays). */
async function resetTelephony(): Promise<void> {
  for (const n of (await api(daemon, 'GET', '/v1/numbers', { key })).body.data as Array<{ number: string }>) {
    await api(daemon, 'DELETE', `/v1/numbers/${encodeURIComponent(n.number)}`, { key });
  }
  for (const t of (await api(daemon, 'GET', '/v1/trunks', { key })).body.data as Array<{ id: string }>) {
    await api(daemon, 'DELETE', `/v1/trunks/${t.id}`, { key });
  }
}

/** The names a command that only sets variables sets (`EMI='…'`, `export A=1 B=2`, `CALL=$(…)`). */
function assignedNames(text: string): string[] {
  if (!/^(export\s+)?[A-Za-z_]\w*=/.test(text) || /^[A-Za-z_]\w*=\S*\s+[a-z./]/.test(text)) return [];
  return [...text.matchAll(/(?:^|\s)([A-Za-z_]\w*)=/g)].map((m) => m[1]!);
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  vars: string;
}

/** Runs `prelude` then `command` in bash in the operator's directory, with the shim directory first on the PATH. */
function bash(prelude: string, command: string, shimDir: string, names: string[], timeoutMs: number): Promise<Outcome> {
  const varsFile = path.join(path.dirname(argvLog), `vars-${Date.now()}`);
  const tail = names.length ? `\n__rc=$?; declare -p ${names.join(' ')} > '${varsFile}' 2>/dev/null; exit $__rc` : '';
  // Stubs so that a check-only line runs nothing outside: only `vagent` (the argv check) is called.
  const stubs = shimDir === shims.check ? 'npm() { :; }; node() { :; }; curl() { :; }; sudo() { :; }; jq() { cat >/dev/null; }\n' : '';
  const env = childEnv(operator, {
    ...SECRETS,
    PATH: `${shimDir}:${process.env.PATH}`,
    VAGENT_STATE_DIR: daemon.stateDir,
    VAGENT_ARGV_LOG: argvLog,
    NO_COLOR: '1',
  });
  return new Promise((resolve, reject) => {
    // The shim goes first on the PATH after the file's own settings (the README exports a PATH too).
    const child = spawn('bash', ['-c', `${stubs}${prelude}\nexport PATH="${shimDir}:$PATH"\n${command}${tail}`], {
      cwd: work,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const vars = fs.existsSync(varsFile) ? fs.readFileSync(varsFile, 'utf8') : '';
      fs.rmSync(varsFile, { force: true });
      resolve({ code, stdout, stderr, vars });
    });
  });
}

/** How many `vagent` invocations a command line holds (as written: `vagent …` words). */
const vagentCalls = (text: string): number => (text.match(/(^|[\s|&;(])vagent\s/g) ?? []).length;

const checkOnlyOf = (c: DocCommand): CheckOnly | undefined => CHECK_ONLY.find((x) => x.file === c.file && x.command.test(c.text));

describe('every command in the README and docs', { timeout: 900_000 }, () => {
  it('runs as written (or, where listed with a reason, parses), in order, against a daemon and the fakes', async () => {
    const failures: string[] = [];
    const used = new Set<CheckOnly>();
    let ran = 0;
    for (const file of docFiles(ROOT)) {
      await resetTelephony();
      let prelude = '';
      for (const c of docCommands(ROOT, file)) {
        const where = `${c.file}:${c.line}`;
        const only = checkOnlyOf(c);
        const names = assignedNames(c.text);
        const before = fs.existsSync(argvLog) ? fs.readFileSync(argvLog, 'utf8').split('\n').filter(Boolean).length : 0;
        const res = await bash(
          prelude,
          await substitute(c.text),
          only ? shims.check : shims.run,
          names,
          /call simulate/.test(c.text) ? 240_000 : 90_000,
        );
        if (only) {
          used.add(only);
          const checked = fs.existsSync(argvLog) ? fs.readFileSync(argvLog, 'utf8').split('\n').filter(Boolean).slice(before) : [];
          const bad = checked.map((l) => JSON.parse(l) as { argv: string[]; ok: boolean; error?: string }).filter((x) => !x.ok);
          if (checked.length < vagentCalls(c.text))
            failures.push(
              `${where}: ${c.text}\n  not every vagent command line was checked (${checked.length} of ${vagentCalls(c.text)}): ${res.stderr.trim()}`,
            );
          for (const b of bad) failures.push(`${where}: ${c.text}\n  vagent ${b.argv.join(' ')}: ${b.error}`);
        } else {
          ran++;
          if (res.code !== 0)
            failures.push(`${where}: ${c.text}\n  exit ${res.code}\n  ${res.stderr.trim().split('\n').slice(-6).join('\n  ')}`);
        }
        if (names.length && res.vars) prelude += `\n${res.vars}`;
      }
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
    // What the commands did is there: the dials went through the fake LiveKit (README, docs/calls.md
    // twice, docs/media.md), the fake's inbound call reached the daemon, the carriers were stored.
    expect(fake.sipParticipants().length).toBeGreaterThanOrEqual(4);
    const calls = (await api(daemon, 'GET', '/v1/calls?limit=100', { key })).body.data as Array<{ from: string | null }>;
    expect(calls.some((c) => c.from === '+919812345678')).toBe(true);
    const carriers = (await api(daemon, 'GET', '/v1/carriers', { key })).body.data as Array<{
      dialect: string;
      configured: boolean;
    }>;
    expect(
      carriers
        .filter((c) => c.configured)
        .map((c) => c.dialect)
        .sort(),
    ).toEqual(['exotel', 'twilio']);
    // The list is kept honest: every entry still names a documented command.
    expect(CHECK_ONLY.filter((x) => !used.has(x)).map((x) => `${x.file} ${x.command}`)).toEqual([]);
    expect(ran).toBeGreaterThan(60);
    expect(SUBSTITUTIONS.length).toBeGreaterThan(0);
  });
});

describe('a command that is only checked', { timeout: 60_000 }, () => {
  it('fails on an unknown flag, a missing argument or required flag, or a value outside the choices, as vagent would', () => {
    const check = (args: string[]) =>
      spawnSync(process.execPath, [path.join(ROOT, 'test', 'support', 'vagent-argv-check.mjs'), ...args], { encoding: 'utf8' });
    for (const [args, error] of [
      [['serve', '--colour'], /unknown option '--colour'/],
      [['login', '--url', 'http://127.0.0.1:8787', '--api-key-stdn'], /unknown option '--api-key-stdn'/],
      [['number', 'bind', '+918047001234'], /missing required argument 'agent-id'/],
      [['call', 'place', '--to', '+919876543210'], /required option '--agent <agent-id>' not specified/],
      [['call', 'simulate', 'ag_clinic_booking', '--transport', 'sip'], /argument 'sip' is invalid/],
    ] as const) {
      const res = check([...args]);
      expect(res.status, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(error);
    }
    for (const args of [
      ['serve'],
      ['carrier', 'set', 'exotel', '--exotel-api-key', 'k', '--api-token-stdin'],
      ['call', 'simulate', 'ag_clinic_booking', '--say', 'hi', '--json'],
    ]) {
      const res = check(args);
      expect(res.status, `${args.join(' ')}: ${res.stderr}`).toBe(0);
      expect(res.stdout + res.stderr).toBe('');
    }
  });
});

/**
 * The flags of a `vagent …` mention in the docs' prose (`vagent admin tenant set NAME
 * --retention-days N|0|default`): the words that name subcommands are followed down the
 * program, and every `--flag` must be an option of the command reached or of one above it.
 * Placeholders and alternatives (`NAME`, `[--dry-run]`, `bash|zsh|fish`) are left as they are.
 * @returns the problems, empty when every flag is known
 */
function unknownFlags(program: Command, mention: string): string[] {
  const words = mention.trim().split(/\s+/).slice(1);
  let cmd = program;
  const chain = [program];
  for (const w of words) {
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (!sub) break;
    cmd = sub;
    chain.push(sub);
  }
  const known = new Set(['--help', ...chain.flatMap((c) => c.options.map((o) => o.long).filter((l): l is string => l !== undefined))]);
  return words
    .map((w) => /^\[?(--[a-z][a-z0-9-]*)/.exec(w)?.[1])
    .filter((f): f is string => f !== undefined && !known.has(f))
    .map(
      (f) =>
        `${f} is not an option of vagent ${chain
          .slice(1)
          .map((c) => c.name())
          .join(' ')}`,
    );
}

describe('every vagent command mentioned in the prose of the README and docs', () => {
  it('uses only flags its command has', () => {
    const program = buildProgram();
    const problems: string[] = [];
    let mentions = 0;
    for (const file of docFiles(ROOT)) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/`(vagent [^`]+)`/g)) {
        for (const part of m[1]!.split('&&')) {
          if (!/^\s*vagent /.test(part)) continue;
          mentions++;
          for (const p of unknownFlags(program, part.replace(/\\\|/g, '|'))) problems.push(`${file}: \`${m[1]}\`: ${p}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(mentions).toBeGreaterThan(50);
    // The check itself: a flag the command lacks is found, one it has (or a global one) is not.
    expect(unknownFlags(program, 'vagent carrier set exotel --api-keys K')).toEqual(['--api-keys is not an option of vagent carrier set']);
    expect(unknownFlags(program, 'vagent admin tenant set NAME --retention-days N|0|default --json')).toEqual([]);
  });
});

// Slot-extraction evaluation through real sessions (docs/agents.md): starts the built daemon on a
// free loopback port with a temporary state dir, applies one agent per slot type, and plays
// every case as a session (open → one turn → end), comparing `summary.extracted.value` with the
// expected value. Prints a table per slot type; exits 1 when a target is missed.
//
// Usage: npm run eval            (builds first)
//        node eval/run.mjs [--verbose] [--json] [--direct] [--llm] [--concurrency N]
//   --direct  skip the daemon and call dist/engine/slots directly (see eval/direct.mjs)
//   --llm     also play every case with the language model (the fake model server) and print,
//             per row, the rules' misses it recovered (eval/llm.mjs; eval/README.md)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NOW_ISO, ORDER, TIMEZONE, loadAllCases, mapLimit, report, sameValue } from './cases.mjs';
import { runDirect } from './direct.mjs';
import { EVAL_LLM, modelUse, printRecoveries, recoveries, startEvalFake } from './llm.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'vagent');

const ASKS = {
  time: 'What time would you like?',
  date: 'Which day would you like?',
  number: 'How many?',
  amount: 'How much would you like to send?',
  person_name: 'Who is it for?',
  yes_no: 'Shall I go ahead?',
  digits: 'What is the number?',
  choice: 'Which one would you like?',
  text: 'Please tell me more.',
};

function parseArgs(argv) {
  const args = { verbose: false, json: false, direct: false, llm: false, concurrency: 8 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--verbose' || a === '-v') args.verbose = true;
    else if (a === '--json') args.json = true;
    else if (a === '--direct') args.direct = true;
    else if (a === '--llm') args.llm = true;
    else if (a === '--concurrency') args.concurrency = Math.max(1, Number(argv[++i]) || 8);
    else throw new Error(`unknown argument ${a}`);
  }
  if (args.llm && (args.direct || args.json))
    throw new Error('--llm plays the cases through the daemon and prints a table: not with --direct or --json');
  return args;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The daemon's environment: ours without VAGENT_* (so it makes its own master key), home in `home`. */
function childEnv(home) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(VAGENT_|LIVEKIT_)/.test(k) || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_DATA_HOME: path.join(home, 'data'),
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${path.join(home, 'no-dbus')}`,
    NO_COLOR: '1',
  };
}

async function waitForHealth(base, daemon, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (daemon.exitCode !== null) throw new Error(`the daemon exited with code ${daemon.exitCode} before it was ready`);
    try {
      const res = await fetch(`${base}/v1/health`);
      if (res.ok) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = err.message;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`the daemon did not become healthy at ${base} (${last})`);
}

function createKey(stateDir, env) {
  const r = spawnSync(process.execPath, [BIN, 'admin', 'key', 'create', '--tenant', 'default', '--state-dir', stateDir, '--json'], {
    env,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`vagent admin key create failed (${r.status}): ${r.stderr || r.stdout}`);
  const out = JSON.parse(r.stdout);
  if (!out.key) throw new Error(`vagent admin key create printed no key: ${r.stdout}`);
  return out.key;
}

function client(base, key) {
  return async function call(method, route, body) {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, body: json, text };
  };
}

/**
 * The agent closing cases are played against: its first step is a yes/no question that is not
 * the last, so an answer alone never ends the session; only the goodbye intent does. `at: more`
 * asks "Is there anything else I can help you with?", `at: mid` a mid-flow question.
 */
function closingAgent(id, at) {
  const ask = at === 'more' ? 'Is there anything else I can help you with?' : 'Would you like me to book it?';
  return {
    id,
    name: 'Evaluation: closing',
    direction: 'inbound',
    language: 'en-IN',
    timezone: TIMEZONE,
    opening: [{ text: 'Hello, this is the evaluation line.' }],
    steps: [
      { id: 'first', ask, capture: { slot: 'first', type: 'yes_no' }, confirm: 'none', max_attempts: 1 },
      { id: 'day', ask: 'Which day would you like?', capture: { slot: 'day', type: 'date' }, confirm: 'none', max_attempts: 1 },
    ],
    closing: 'Thank you. Goodbye!',
  };
}

/** The agent a case is played against; with `llm`, the same agent with an `llm` block (eval/llm.mjs). */
function agentDefinition(id, type, capture, llm = false) {
  const def = rulesAgent(id, type, capture);
  return llm ? { ...def, llm: EVAL_LLM } : def;
}

function rulesAgent(id, type, capture) {
  if (type === 'closing') return closingAgent(id, capture.at);
  return {
    id,
    name: `Evaluation: ${type}`,
    direction: 'inbound',
    language: 'en-IN',
    timezone: TIMEZONE,
    opening: [{ text: 'Hello, this is the evaluation line.' }],
    steps: [
      {
        id: 'q',
        ask: ASKS[type] ?? 'Please answer.',
        capture: { slot: 'value', type, ...capture },
        confirm: 'none',
        max_attempts: 1,
      },
    ],
    closing: 'Thank you. Goodbye!',
  };
}

/** Applies one agent per distinct (type, capture) (with `llm`: `…_llm`, with an `llm` block); returns case → agent id. */
async function applyAgents(call, cases, llm = false) {
  const ids = new Map();
  const agentOf = new Map();
  for (const c of cases) {
    const key = `${c.type}:${JSON.stringify(c.capture)}`;
    if (!ids.has(key)) {
      const n = [...ids.keys()].filter((k) => k.startsWith(`${c.type}:`)).length;
      const id = `ag_eval_${c.type}${n === 0 ? '' : `_${n + 1}`}${llm ? '_llm' : ''}`;
      const res = await call('PUT', `/v1/agents/${id}`, agentDefinition(id, c.type, c.capture, llm));
      if (res.status !== 200 && res.status !== 201) throw new Error(`PUT /v1/agents/${id} → ${res.status}: ${res.text}`);
      ids.set(key, id);
    }
    agentOf.set(c, ids.get(key));
  }
  return agentOf;
}

async function playCase(call, agentId, c) {
  const opened = await call('POST', '/v1/sessions', { agent_id: agentId, context: { now: NOW_ISO } });
  if (opened.status !== 201) throw new Error(`POST /v1/sessions → ${opened.status}: ${opened.text}`);
  const sid = opened.body.session_id;
  const turn = await call('POST', `/v1/sessions/${sid}/turn`, { text: c.text });
  if (turn.status !== 200) throw new Error(`POST /v1/sessions/${sid}/turn → ${turn.status}`);
  // The rules' goodbye, or the model's (`llm:goodbye`, docs/llm.md "Where the model acts").
  const closed = turn.body?.trace?.layer === 'control:goodbye' || turn.body?.trace?.layer === 'llm:goodbye';
  const llm = modelUse(turn.body?.trace);
  const ended = await call('POST', `/v1/sessions/${sid}/end`);
  if (ended.status !== 200) throw new Error(`POST /v1/sessions/${sid}/end → ${ended.status}`);
  if (c.type === 'closing') return { got: closed, llm };
  const extracted = ended.body?.summary?.extracted ?? {};
  return { got: Object.hasOwn(extracted, 'value') ? extracted.value : null, llm };
}

/** Plays every case against the agents of `agentOf`: one result per case, in order. */
function playAll(call, cases, agentOf, concurrency) {
  return mapLimit(cases, concurrency, async (c) => {
    try {
      const { got, llm } = await playCase(call, agentOf.get(c), c);
      return { case: c, got, ok: sameValue(c.type, got, c.expected), llm };
    } catch (err) {
      return { case: c, got: null, ok: false, error: err.message };
    }
  });
}

/**
 * Plays the cases through a daemon: the results of the rules alone, and with `llmUrl` (the fake
 * model's base URL) also `withModel`, the same cases against agents with an `llm` block.
 */
async function runSessions(cases, concurrency, llm = null) {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'main.js')))
    throw new Error('dist/ is missing: run `npm run build` (or `npm run eval`) first');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-eval-'));
  const stateDir = path.join(tmp, 'state');
  const env = { ...childEnv(tmp), ...(llm ? { VAGENT_LLM_BASE_URL: llm.url, VAGENT_LLM_MODEL: llm.model } : {}) };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const daemon = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', String(port), '--state-dir', stateDir], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  daemon.stdout.on('data', (d) => {
    logs += d;
  });
  daemon.stderr.on('data', (d) => {
    logs += d;
  });
  try {
    await waitForHealth(base, daemon);
    const call = client(base, createKey(stateDir, env));
    const results = await playAll(call, cases, await applyAgents(call, cases), concurrency);
    if (!llm) return { results };
    const withModel = await playAll(call, cases, await applyAgents(call, cases, true), concurrency);
    return { results, withModel };
  } catch (err) {
    err.message += logs ? `\n--- daemon output ---\n${logs.slice(-4000)}` : '';
    throw err;
  } finally {
    if (daemon.exitCode === null) {
      const exited = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM');
      const timer = setTimeout(() => daemon.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const cases = loadAllCases();
  const fake = args.llm ? await startEvalFake() : null;
  try {
    const { results, withModel } = args.direct ? { results: await runDirect(cases) } : await runSessions(cases, args.concurrency, fake);
    const title = args.direct ? 'Slot extraction, direct (dist/engine/slots)' : 'Slot extraction through sessions (vagent serve)';
    // Targets are judged on the rules alone: the model's table is a report, never a verdict.
    const code = report(results, {
      verbose: args.verbose,
      json: args.json,
      title: args.json ? (args.direct ? 'direct' : 'sessions') : title,
    });
    if (withModel) printRecoveries(recoveries(results, withModel), ORDER);
    return code;
  } finally {
    await fake?.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`eval: ${err.message}\n`);
    process.exitCode = 2;
  },
);

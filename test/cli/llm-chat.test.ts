/**
 * The language model end to end, as a new user meets it (docs/llm.md "Trying it without a
 * provider"): the fake model server of `npm run fake-llm` on loopback, a real `vagent serve`
 * pointed at it through the `VAGENT_LLM_*` environment, and the built CLI's `vagent chat
 * ag_clinic_booking` asking "do you take UPI?". The fake's token counts are deterministic
 * (src/devtools/fake-llm-replies.ts) and its model is priced in config/pricing.yaml, so usage and
 * costs are asserted to the micro-rupee. Over HTTP: the fake's 429, 500 and hang modes fall back
 * to the rules' re-prompt within the deadline, and the API key shows in no response, log line or
 * error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../src/devtools/fake-llm.js';
import { cleanupAll, runCli, startDaemonWithKey, type Daemon } from '../support/daemon.js';

/** A key the fake requires, shaped like a provider's, so that a leak would be plain to see. */
const KEY = 'sk-e2e-Zq8vN3kLm2Pw7Xr4Tt9Yb1Cd';
/** The daemon's deadline for a turn's model step (`llm.timeout_ms`). */
const DEADLINE_MS = 1500;
/** config/pricing.yaml `fake-llm`, INR per 1M tokens. */
const PRICE = { input: 12.75, cached: 6.38, output: 51.0 };
const REPROMPT = "Sorry, I did not catch that. Could you tell me the patient's full name?";

let fake: FakeLlm;
let daemon: Daemon;
let env: Record<string, string>;

/** µ₹ of a request as src/config/pricing.ts reckons it: each part rounded to the micro-rupee. */
function micro(u: { prompt: number; cached: number; completion: number }): number {
  return Math.round((u.prompt - u.cached) * PRICE.input) + Math.round(u.cached * PRICE.cached) + Math.round(u.completion * PRICE.output);
}

interface Turn {
  text: string;
  trace: {
    layer: string;
    llm_used: boolean;
    usage?: { model: string; input_tokens: number; output_tokens: number; cached_tokens: number };
    steps: Array<{ layer: string; result: string; detail?: string }>;
    latency_ms: { total: number; llm: number | null };
  };
  cost: { llm_inr: number; total_inr: number };
  session_totals: Record<string, number>;
}

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: T }> {
  const res = await fetch(`${daemon.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.VAGENT_API_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: (text ? JSON.parse(text) : null) as T };
}

/** Every response body seen over HTTP, searched for the key at the end. */
const bodies: string[] = [];

/** The daemon's warn lines about failed model requests of `kind` (its JSON log on stdout). */
function warnLines(kind: string): Array<Record<string, unknown>> {
  return daemon
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.component === 'llm' && l.kind === kind);
}

/** The first warn line of `kind`, waiting a little for the log to be read. */
async function waitForWarn(kind: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 50 && warnLines(kind).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
  const [line] = warnLines(kind);
  expect(line, `no warn line of kind ${kind} in:\n${daemon.stdout()}`).toBeDefined();
  return line!;
}

async function openSession(): Promise<string> {
  const res = await api<{ session_id: string }>('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' });
  bodies.push(res.text);
  expect(res.status, res.text).toBe(201);
  return res.json.session_id;
}

async function say(id: string, text: string): Promise<Turn> {
  const res = await api<Turn>('POST', `/v1/sessions/${id}/turn`, { text });
  bodies.push(res.text);
  expect(res.status, res.text).toBe(200);
  return res.json;
}

beforeAll(async () => {
  fake = await startFakeLlm({ apiKey: KEY });
  ({ daemon, env } = await startDaemonWithKey({
    env: {
      VAGENT_LLM_BASE_URL: fake.url,
      VAGENT_LLM_MODEL: fake.model,
      VAGENT_LLM_API_KEY: KEY,
      VAGENT_LLM_TIMEOUT_MS: String(DEADLINE_MS),
    },
  }));
}, 60_000);
afterAll(async () => {
  await cleanupAll();
  await fake?.close();
}, 30_000);

describe('vagent chat against the fake model', { timeout: 60_000 }, () => {
  it('the daemon says which model it uses, never the key', () => {
    expect(daemon.stderr()).toContain(`llm: fake-llm at ${new URL(fake.url).host}, requests time out after ${DEADLINE_MS} ms`);
  });

  it('answers "do you take UPI?" from the instructions, asks the step question, and shows tokens and ₹ in the turn line', async () => {
    const sent = fake.requests.length;
    const res = await runCli(['chat', 'ag_clinic_booking'], { env, input: 'do you take UPI?\n' });
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.split('\n');
    const asked = lines.findIndex((l) => l === 'you   › do you take UPI?');
    expect(asked, res.stdout).toBeGreaterThan(0);
    expect(lines[asked + 1]).toBe('agent › Cash, debit and credit cards, and UPI (Google Pay, PhonePe, Paytm) at the desk.');
    expect(lines[asked + 2]).toBe("agent › May I have the patient's name?");
    // The fake counts ceil(characters / 4) + 4 per message: 535 prompt tokens (none cached: the
    // first request of this fake), 20 completion tokens (the 79-character answer).
    // 535 × ₹12.75/1M + 20 × ₹51/1M = 6 821 + 1 020 µ₹ = ₹0.007841.
    expect(lines[asked + 3]).toMatch(
      /^layer=llm · ₹0\.01 · [\d.]+ m?s · llm 535 in \(0 cached\) \/ 20 out tokens ₹0\.007841 \d+ ms \(session ₹0\.01\)$/,
    );
    expect(res.stdout).toMatch(/cost: +₹0\.01 \(llm ₹0\.01, tts ₹0\.00, stt ₹0\.00\)/);
    expect(fake.requests.length).toBe(sent + 1);
    const req = fake.requests.at(-1)!;
    expect(req).toMatchObject({ authorized: true, status: 200, stream: true, rule: null });
    expect(req.usage).toEqual({ prompt: 535, cached: 0, completion: 20 });
    expect(micro(req.usage!)).toBe(7841);
  });

  it('over HTTP: the turn, the session detail and the session.turn event carry the exact usage and cost; cached tokens priced apart', async () => {
    fake.clearCache(); // the chat above sent this very prompt: start this session uncached
    const id = await openSession();
    const first = await say(id, 'do you take UPI?');
    expect(first.text).toBe(
      "Cash, debit and credit cards, and UPI (Google Pay, PhonePe, Paytm) at the desk. May I have the patient's name?",
    );
    expect(first.trace.layer).toBe('llm');
    expect(first.trace.llm_used).toBe(true);
    expect(first.trace.steps.filter((s) => s.layer === 'llm')).toEqual([{ layer: 'llm', result: 'match', detail: 'reply' }]);
    expect(first.trace.latency_ms.llm).toBeGreaterThan(0);
    expect(first.trace.latency_ms.llm!).toBeLessThanOrEqual(first.trace.latency_ms.total);
    expect(fake.requests.at(-1)!.usage).toEqual({ prompt: 535, cached: 0, completion: 20 });
    expect(first.trace.usage).toEqual({ model: 'fake-llm', input_tokens: 535, output_tokens: 20, cached_tokens: 0 });
    expect(first.cost.llm_inr).toBe(0.007841);
    expect(first.cost.total_inr).toBe(0.007841);

    const second = await say(id, 'is there a lift?');
    // The system message (498 tokens) was sent on the first turn: the fake serves it from its
    // prompt cache. 40 × ₹12.75/1M + 498 × ₹6.38/1M + 17 × ₹51/1M = 510 + 3 177 + 867 µ₹ = ₹0.004554.
    const u2 = { prompt: 538, cached: 498, completion: 17 };
    expect(fake.requests.at(-1)!.usage).toEqual(u2);
    expect(micro(u2)).toBe(4554);
    expect(second.trace.usage).toEqual({ model: 'fake-llm', input_tokens: 538, output_tokens: 17, cached_tokens: 498 });
    expect(second.cost.llm_inr).toBe(0.004554);
    expect(second.session_totals).toMatchObject({ llm_inr: 0.012395, llm_calls: 2, llm_input_tokens: 1073, llm_output_tokens: 37 });

    const detail = await api<Record<string, unknown>>('GET', `/v1/sessions/${id}`);
    bodies.push(detail.text);
    expect(detail.json).toMatchObject({
      llm_calls: 2,
      llm_input_tokens: 1073,
      llm_output_tokens: 37,
      llm_cached_tokens: 498,
      llm_cost_inr: 0.012395,
    });
    const turns = detail.json.turns as Array<Record<string, unknown>>;
    expect(turns[0]).toMatchObject({ layer: 'llm', llm: { model: 'fake-llm', input_tokens: 535, output_tokens: 20, cached_tokens: 0 } });

    const events = await api<{ data: Array<{ type: string; data: Record<string, unknown> }> }>(
      'GET',
      `/v1/events?types=session.turn&session_id=${id}`,
    );
    bodies.push(events.text);
    expect(events.status, events.text).toBe(200);
    expect(events.json.data.map((e) => e.data)).toMatchObject([
      { turn: 1, heard: 'do you take UPI?', reply: first.text, layer: 'llm', cost_inr: 0.007841 },
      { turn: 2, heard: 'is there a lift?', reply: second.text, layer: 'llm', cost_inr: 0.004554 },
    ]);
  });

  for (const [mode, rule, details] of [
    ['429', { status: 429, retry_after_ms: 10 }, ['rate_limited']],
    // A provider's error text that repeats the key: it must be redacted wherever it is told.
    ['500', { status: 500, retry_after_ms: 10, reply: `upstream failed for key ${KEY}` }, ['server_error']],
    ['hang', { mode: 'hang' }, ['timeout']],
  ] as const) {
    it(`a ${mode} from the model falls back to the rules' re-prompt within the deadline`, async () => {
      fake.setRules([{ match: 'UPI', ...rule }]);
      try {
        const id = await openSession();
        const started = performance.now();
        const turn = await say(id, 'do you take UPI?');
        const took = performance.now() - started;
        expect(turn.text).toBe(REPROMPT);
        expect(turn.trace.llm_used).toBe(true);
        const step = turn.trace.steps.find((s) => s.layer === 'llm');
        expect(step?.result).toBe('miss');
        expect(details as readonly string[]).toContain(step?.detail);
        expect(turn.trace.latency_ms.llm!).toBeLessThan(DEADLINE_MS + 500);
        expect(took).toBeLessThan(DEADLINE_MS + 3000);
        expect(turn.cost.llm_inr).toBe(0); // no answer, no tokens
        // The operator's log says why, with the endpoint's host and status (docs/llm.md "Failures").
        const logged = await waitForWarn(step!.detail!);
        expect(logged).toMatchObject({ level: 40, component: 'llm', host: new URL(fake.url).host, model: 'fake-llm' });
        expect(logged.status).toBe(mode === 'hang' ? null : Number(mode));
        // The session goes on: the caller's name is still taken by the rules.
        const next = await say(id, 'Priya Sharma');
        expect(next.trace.layer).toBe('capture');
      } finally {
        fake.setRules([]);
      }
    });
  }

  it('a refused request (a wrong key: 401): the chat turn line says why, the log has one warn line per kind, repeats not logged', async () => {
    fake.setRules([{ match: 'UPI', status: 401, reply: 'Incorrect API key provided' }]);
    try {
      const res = await runCli(['chat', 'ag_clinic_booking'], { env, input: 'do you take UPI?\ndo you take UPI?\n' });
      expect(res.code, res.stderr).toBe(0);
      const footers = res.stdout.split('\n').filter((l) => l.startsWith('layer='));
      expect(footers.length, res.stdout).toBeGreaterThanOrEqual(2);
      expect(footers[0]).toMatch(/^layer=reprompt · ₹0\.00 · [\d.]+ m?s · llm refused \(401\) [\d.]+ m?s \(session ₹0\.00\)$/);
      expect(res.stdout).not.toContain('0 in (0 cached)');
      const logged = await waitForWarn('refused');
      expect(logged).toMatchObject({ status: 401, host: new URL(fake.url).host });
      expect(String(logged.msg)).toContain('Incorrect API key provided');
      expect(String(logged.msg)).toContain('401');
      // The second refusal within the minute is counted, not logged.
      expect(warnLines('refused')).toHaveLength(1);
    } finally {
      fake.setRules([]);
    }
  });

  it('the key shows in no response, log line or CLI output', async () => {
    const chat = await runCli(['chat', 'ag_clinic_booking'], { env, input: 'do you take UPI?\n' });
    expect(chat.code, chat.stderr).toBe(0);
    expect(fake.requests.every((r) => r.authorized)).toBe(true);
    for (const text of [...bodies, daemon.stdout(), daemon.stderr(), chat.stdout, chat.stderr]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(KEY.slice(3, 15));
    }
  });
});

/**
 * The model inside a text turn (docs/llm.md "Where the model acts"), through `/v1` with an
 * in-process scripted model: an off-script reply with its tokens and cost exact to the
 * micro-rupee (cached tokens priced apart, from the shipped config/pricing.yaml), slot and intent
 * fallbacks checked by the rules, every failure falling back to the rules' re-prompt, the tenant
 * budget and the per-session cap refusing a call, an agent without `llm` never calling, and an
 * idempotent replay not calling again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { ScriptedModel } from '../helpers/scripted-model.js';
import type { LlmFailure } from '../../src/app/llm-step.js';

const INSTRUCTIONS = 'Sunrise Clinic takes cash, card and UPI. Open 9 to 6, Monday to Saturday.';

function clinic(id: string, llm: Record<string, unknown> | null = { model: 'gpt-4o-mini', instructions: INSTRUCTIONS }) {
  return {
    id,
    name: 'Clinic',
    direction: 'inbound',
    language: 'en-IN',
    opening: [{ text: 'Namaste, Sunrise Clinic.' }],
    steps: [
      { id: 'name', ask: "May I have the patient's name?", capture: { slot: 'patient_name', type: 'person_name' }, confirm: 'readback' },
      { id: 'day', ask: 'Which day would you like to come in?', capture: { slot: 'visit_date', type: 'date' }, max_attempts: 5 },
      { id: 'done', ask: 'Anything else?', capture: { slot: 'more', type: 'yes_no' } },
    ],
    faq: [{ intent: 'fees', keywords: ['fee', 'fees'], answer: 'The fee is five hundred rupees.' }],
    closing: 'Goodbye!',
    ...(llm ? { llm } : {}),
  };
}

type Turn = {
  text: string;
  trace: {
    layer: string;
    llm_used: boolean;
    usage?: Record<string, unknown>;
    steps: Array<Record<string, unknown>>;
    latency_ms: { llm: number | null };
  };
  cost: { llm_inr: number; total_inr: number };
  session_totals: { llm_inr: number; llm_calls: number; llm_input_tokens: number; llm_output_tokens: number };
  state: { cursor: string };
};

let t: TestApp;
let model: ScriptedModel;

async function open(agentId: string): Promise<string> {
  const res = await t.call('POST', '/v1/sessions', { agent_id: agentId });
  expect(res.statusCode).toBe(201);
  return res.json<{ session_id: string }>().session_id;
}

async function say(id: string, text: string, headers?: Record<string, string>): Promise<Turn> {
  const res = await t.call('POST', `/v1/sessions/${id}/turn`, { text }, headers ? { headers } : {});
  expect(res.statusCode).toBe(200);
  return res.json<Turn>();
}

/** Failed model requests the service told of (the daemon logs them). */
const failures: LlmFailure[] = [];

const llmSteps = (turn: Turn) => turn.trace.steps.filter((s) => s.layer === 'llm');

beforeAll(async () => {
  model = new ScriptedModel();
  t = await makeTestApp({}, { languageModel: model, llmDeadlineMs: 300, onLlmFailure: (f) => failures.push(f) });
  for (const [id, llm] of [
    ['ag_llm', undefined],
    ['ag_rules', null],
    ['ag_capped', { model: 'gpt-4o-mini', instructions: INSTRUCTIONS, max_calls_per_session: 1 }],
  ] as const) {
    const res = await t.call('PUT', `/v1/agents/${id}`, clinic(id, llm));
    expect(res.statusCode).toBe(200);
  }
});
afterAll(() => t.close());

describe('an off-script question', () => {
  it('is answered by the model, then the step question follows; tokens and cost exact, cached priced apart', async () => {
    const id = await open('ag_llm');
    model.script({ text: 'Yes, we take UPI at the desk.', usage: { promptTokens: 1200, completionTokens: 40, cachedTokens: 1000 } });
    const before = model.calls;
    const turn = await say(id, 'do you take UPI?');
    expect(model.calls).toBe(before + 1);
    const sent = model.received.at(-1)!;
    expect(sent.streamed).toBe(true);
    expect(sent.request.model).toBe('gpt-4o-mini');
    expect(sent.request.maxOutputTokens).toBe(200);
    const system = sent.request.messages[0]!.content;
    expect(system).toContain(INSTRUCTIONS);
    expect(system).toContain('The fee is five hundred rupees.');
    expect(sent.request.messages.at(-1)).toEqual({ role: 'user', content: 'do you take UPI?' });

    expect(turn.text).toBe("Yes, we take UPI at the desk. May I have the patient's name?");
    expect(turn.trace.layer).toBe('llm');
    expect(turn.trace.llm_used).toBe(true);
    expect(typeof turn.trace.latency_ms.llm).toBe('number');
    expect(turn.trace.usage).toEqual({ model: 'gpt-4o-mini', input_tokens: 1200, output_tokens: 40, cached_tokens: 1000 });
    expect(llmSteps(turn)).toEqual([{ layer: 'llm', result: 'match', detail: 'reply' }]);
    // gpt-4o-mini: 200 input × ₹12.75/1M + 1000 cached × ₹6.38/1M + 40 output × ₹51/1M
    //   = 2 550 + 6 380 + 2 040 µ₹ = ₹0.01097.
    expect(turn.cost.llm_inr).toBe(0.01097);
    expect(turn.session_totals).toMatchObject({ llm_inr: 0.01097, llm_calls: 1, llm_input_tokens: 1200, llm_output_tokens: 40 });

    const detail = (await t.call('GET', `/v1/sessions/${id}`)).json<Record<string, unknown>>();
    expect(detail).toMatchObject({
      llm_calls: 1,
      llm_input_tokens: 1200,
      llm_output_tokens: 40,
      llm_cached_tokens: 1000,
      llm_cost_inr: 0.01097,
    });
    const turns = detail.turns as Array<Record<string, unknown>>;
    expect(turns[0]).toMatchObject({
      layer: 'llm',
      llm: { model: 'gpt-4o-mini', input_tokens: 1200, output_tokens: 40, cached_tokens: 1000 },
    });
  });

  it('an idempotent replay returns the stored answer without calling the model again', async () => {
    const id = await open('ag_llm');
    model.script({ text: 'We are open nine to six.', usage: { promptTokens: 100, completionTokens: 10 } });
    const headers = { 'idempotency-key': 'llm-turn-1' };
    const first = await t.call('POST', `/v1/sessions/${id}/turn`, { text: 'are you open on saturdays?' }, { headers });
    const calls = model.calls;
    const again = await t.call('POST', `/v1/sessions/${id}/turn`, { text: 'are you open on saturdays?' }, { headers });
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(model.calls).toBe(calls);
  });

  it('an agent without llm never calls the model', async () => {
    const id = await open('ag_rules');
    const before = model.calls;
    const turn = await say(id, 'do you take UPI?');
    await say(id, 'hmm, not sure really');
    expect(model.calls).toBe(before);
    expect(turn.trace.llm_used).toBe(false);
    expect(turn.trace.latency_ms.llm).toBeNull();
    expect(turn.cost.llm_inr).toBe(0);
  });
});

describe('bad or missing model output falls back to the rules re-prompt', () => {
  const cases: Array<[string, Parameters<ScriptedModel['script']>[0]]> = [
    ['timeout', { hang: true }],
    ['rate_limited', { fail: 'rate_limited', status: 429 }],
    ['server_error', { fail: 'server_error', status: 503 }],
    ['empty', { text: '   ' }],
    ['too_long', { text: 'word '.repeat(200) }],
    ['too_long', { text: 'Yes we', finishReason: 'length' }],
    ['other_language', { text: 'हाँ, हम यूपीआई लेते हैं।' }],
  ];
  for (const [detail, answer] of cases) {
    it(`${detail}`, async () => {
      const id = await open('ag_llm');
      model.script(answer);
      const started = Date.now();
      const turn = await say(id, 'do you take UPI?');
      expect(Date.now() - started).toBeLessThan(5000);
      expect(turn.trace.layer).toBe('reprompt');
      expect(turn.text).toContain("patient's name");
      // A failed request names the endpoint's status in the trace (the chat turn line shows it).
      const status = 'status' in answer && answer.status !== undefined ? { status: answer.status } : {};
      expect(llmSteps(turn)).toEqual([{ layer: 'llm', result: 'miss', detail, ...status }]);
      expect(turn.trace.llm_used).toBe(true);
      // A failed request (not a bad answer) is told to the daemon's log, with its kind and status.
      const failed = ['timeout', 'rate_limited', 'server_error'].includes(detail);
      expect(failures.at(-1)?.kind === detail).toBe(failed);
      if (failed) expect(failures.at(-1)).toMatchObject({ model: 'gpt-4o-mini', status: 'status' in answer ? answer.status : null });
      failures.length = 0;
    });
  }

  it('malformed or truncated JSON for a slot', async () => {
    const id = await open('ag_llm');
    await say(id, 'my name is Priya Sharma');
    await say(id, 'yes');
    model.script({ text: '{"value": "2026-1' }, { text: '{"value": "x"}', finishReason: 'length' });
    for (let i = 0; i < 2; i++) {
      const turn = await say(id, 'sometime after the wedding works');
      expect(turn.trace.layer).toBe('reprompt');
      expect(llmSteps(turn)).toEqual([{ layer: 'llm', result: 'miss', detail: 'malformed' }]);
    }
  });
});

describe('slot and intent fallbacks', () => {
  it('a slot value of the right type is stored by the rules; one of the wrong type is refused', async () => {
    const id = await open('ag_llm');
    await say(id, 'my name is Priya Sharma');
    await say(id, 'yes');
    model.script({ text: '{"value": "Priya"}', usage: { promptTokens: 300, completionTokens: 5 } });
    const wrong = await say(id, 'sometime after the wedding works');
    expect(model.received.at(-1)!.request.jsonSchema?.name).toBe('slot_date');
    expect(model.received.at(-1)!.streamed).toBe(false);
    expect(wrong.trace.layer).toBe('reprompt');
    expect(llmSteps(wrong)).toEqual([{ layer: 'llm', result: 'miss', detail: 'wrong_type', slot: 'visit_date', type: 'date' }]);
    expect(wrong.cost.llm_inr).toBeGreaterThan(0); // the tokens were spent all the same

    model.script({ text: '{"value": "2026-11-30"}' });
    const right = await say(id, 'sometime after the wedding works');
    expect(right.trace.layer).toBe('llm');
    expect(right.state.cursor).toBe('done');
    const detail = (await t.call('GET', `/v1/sessions/${id}`)).json<{ session: { steps: Array<{ id: string; value: unknown }> } }>();
    expect(detail.session.steps.find((s) => s.id === 'day')!.value).toBe('2026-11-30');
  });

  it('an unsure control intent is decided by the model and acted on', async () => {
    const id = await open('ag_llm');
    await say(id, 'my name is Priya Sharma');
    await say(id, 'yes');
    model.script({ text: '{"intent": "goodbye"}' });
    const turn = await say(id, 'okay I reckon we are done');
    expect(model.received.at(-1)!.request.jsonSchema?.name).toBe('control_intent');
    expect(turn.trace.layer).toBe('llm:goodbye');
    expect(turn.text).toBe('Goodbye!');
  });
});

describe('refusals before a call', () => {
  it('the per-session cap', async () => {
    const id = await open('ag_capped');
    model.script({ text: 'Yes.' });
    expect((await say(id, 'do you take UPI?')).trace.layer).toBe('llm');
    const before = model.calls;
    const capped = await say(id, 'do you take cards?');
    expect(model.calls).toBe(before);
    expect(capped.trace.llm_used).toBe(false);
    expect(llmSteps(capped)).toEqual([{ layer: 'llm', result: 'miss', detail: 'session_cap' }]);
  });

  it('the tenant budget, with the call worst cost', async () => {
    const poor = await makeTestApp({ tenant_daily_budget_inr: 0.005 }, { languageModel: model });
    try {
      expect((await poor.call('PUT', '/v1/agents/ag_llm', clinic('ag_llm'))).statusCode).toBe(200);
      const id = (await poor.call('POST', '/v1/sessions', { agent_id: 'ag_llm' })).json<{ session_id: string }>().session_id;
      const before = model.calls;
      // Worst cost: 200 output tokens × ₹51/1M = ₹0.0102 alone, over the ₹0.005 budget.
      const turn = (await poor.call('POST', `/v1/sessions/${id}/turn`, { text: 'do you take UPI?' })).json<Turn>();
      expect(model.calls).toBe(before);
      expect(turn.trace.layer).toBe('reprompt');
      expect(llmSteps(turn)).toEqual([{ layer: 'llm', result: 'miss', detail: 'budget' }]);
    } finally {
      await poor.close();
    }
  });
});

describe('PUT /v1/agents warns of an unpriced model', () => {
  it('names llm.model and still applies the agent', async () => {
    const res = await t.call('PUT', '/v1/agents/ag_unpriced', clinic('ag_unpriced', { model: 'my-local-llama', instructions: 'x' }));
    expect(res.statusCode).toBe(200);
    const body = res.json<{ warnings?: Array<{ param: string; message: string }> }>();
    expect(body.warnings).toEqual([{ param: 'llm.model', message: expect.stringContaining('my-local-llama has no price') as string }]);
    const priced = (await t.call('PUT', '/v1/agents/ag_llm', clinic('ag_llm'))).json<{ warnings?: unknown }>();
    expect(priced.warnings).toBeUndefined();
  });

  it('refuses a bad llm block naming the field', async () => {
    for (const [llm, param] of [
      [{ instructions: '' }, 'llm.instructions'],
      [{ instructions: 'x', temperature: 3 }, 'llm.temperature'],
      [{ instructions: 'x', max_output_tokens: 0 }, 'llm.max_output_tokens'],
      [{ instructions: 'x', max_calls_per_session: 1.5 }, 'llm.max_calls_per_session'],
      [{ instructions: 'x', api_key: 'sk-secret' }, 'llm'],
      [{ instructions: 'x'.repeat(8001) }, 'llm.instructions'],
      ['yes', 'llm'],
    ] as const) {
      const res = await t.call('PUT', '/v1/agents/ag_bad', clinic('ag_bad', llm as never));
      expect(res.statusCode).toBe(400);
      expect(res.json<{ error: { code: string; param: string } }>().error).toMatchObject({ code: 'invalid_request', param });
      expect(res.body).not.toContain('sk-secret');
    }
  });
});

describe('an agent with llm on a daemon without a model', () => {
  it('keeps the rules re-prompt and says why', async () => {
    const bare = await makeTestApp();
    try {
      expect((await bare.call('PUT', '/v1/agents/ag_llm', clinic('ag_llm'))).statusCode).toBe(200);
      const id = (await bare.call('POST', '/v1/sessions', { agent_id: 'ag_llm' })).json<{ session_id: string }>().session_id;
      const turn = (await bare.call('POST', `/v1/sessions/${id}/turn`, { text: 'do you take UPI?' })).json<Turn>();
      expect(turn.trace.layer).toBe('reprompt');
      expect(turn.trace.llm_used).toBe(false);
      expect(llmSteps(turn)).toEqual([{ layer: 'llm', result: 'miss', detail: 'not_configured' }]);
    } finally {
      await bare.close();
    }
  });
});

/**
 * The fake model server (src/devtools/fake-llm.ts) driven over plain HTTP: its wire format (a
 * completion, the SSE chunks with the usage chunk and `[DONE]`, `/v1/models`), its default
 * replies, its rules (from options and the control endpoint, refused when malformed) and its
 * answers to bad requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NO_ANSWER, plainReply, schemaReply } from '../../src/devtools/fake-llm-replies.js';
import { parseRules, startFakeLlm, type FakeLlm } from '../../src/devtools/fake-llm.js';

let fake: FakeLlm | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('the fake model server', () => {
  it('answers a completion and an SSE stream in the OpenAI wire format', async () => {
    fake = await startFakeLlm({ rules: [{ reply: 'Yes we do.' }] });
    const plain = await post(`${fake.url}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'UPI?' }] });
    expect(plain.status).toBe(200);
    const body = (await plain.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Yes we do.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 0 } },
    });
    const streamed = await post(`${fake.url}/chat/completions`, {
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'UPI?' }],
    });
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const events = (await streamed.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)) as Record<string, any>);
    expect(chunks[0]!.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks.slice(1, -2).map((c) => c.choices[0].delta.content)).toEqual(['Yes ', 'we ', 'do.']);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 5 } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    const models = (await (await fetch(`${fake.url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(['fake-llm']);
  });

  it('reports llama.cpp timings in the llamacpp dialect', async () => {
    fake = await startFakeLlm({ dialect: 'llamacpp' });
    const messages = [{ role: 'user', content: 'hello' }];
    await post(`${fake.url}/chat/completions`, { model: 'm', messages });
    const again = (await (await post(`${fake.url}/chat/completions`, { model: 'm', messages })).json()) as Record<string, any>;
    expect(again.usage.prompt_tokens_details).toBeUndefined();
    expect(again.timings).toMatchObject({ cache_n: 6, prompt_n: 0, predicted_n: again.usage.completion_tokens });
  });

  it('takes rules from the control endpoint, and refuses malformed rules and requests', async () => {
    fake = await startFakeLlm();
    const put = await fetch(`${fake.url.replace(/\/v1$/, '')}/control/rules`, {
      method: 'PUT',
      body: JSON.stringify({ rules: [{ match: 'busy', status: 429 }] }),
    });
    expect(put.status).toBe(200);
    const busy = await post(`${fake.url}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'busy?' }] });
    expect(busy.status).toBe(429);
    expect(((await busy.json()) as { error: { type: string } }).error.type).toBe('rate_limit_error');
    const bad = await fetch(`${fake.url.replace(/\/v1$/, '')}/control/rules`, {
      method: 'PUT',
      body: JSON.stringify({ rules: [{ match: '(' }] }),
    });
    expect(bad.status).toBe(400);
    expect((await post(`${fake.url}/chat/completions`, '{not json')).status).toBe(400);
    expect((await post(`${fake.url}/chat/completions`, { model: 'm' })).status).toBe(400);
    expect((await post(`${fake.url}/chat/completions`, { messages: [{ role: 'user', content: 'x' }] })).status).toBe(400);
    expect(() => parseRules([{ mode: 'explode' }])).toThrow(/rule 0: mode must be hang, malformed or cut/);
    expect(() => parseRules([{ status: 99 }])).toThrow(/status must be a whole number from 200 to 599/);
    expect(() => parseRules([{ surprise: 1 }])).toThrow(/unknown field surprise/);
    expect(() => parseRules('no')).toThrow(/must be a list/);
  });

  it('requires the API key it was given', async () => {
    fake = await startFakeLlm({ apiKey: 'k1' });
    const msg = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    expect((await post(`${fake.url}/chat/completions`, msg)).status).toBe(401);
    expect((await post(`${fake.url}/chat/completions`, msg, { authorization: 'Bearer k1' })).status).toBe(200);
  });

  it('answers from the prompt by default: the sentence sharing most words, or a schema filled from the question', () => {
    const system =
      'You book appointments for Sunrise Clinic.\nFAQ: We accept cash, cards and UPI. The clinic opens at 9 am. Doctors see patients by appointment only.';
    expect(
      plainReply([
        { role: 'system', content: system },
        { role: 'user', content: 'do you take UPI?' },
      ]),
    ).toBe('We accept cash, cards and UPI.');
    expect(
      plainReply([
        { role: 'system', content: system },
        { role: 'user', content: 'what time does the clinic open?' },
      ]),
    ).toBe('The clinic opens at 9 am.');
    // A leading label is dropped and the sentence starts with a capital, as said to a caller.
    expect(
      plainReply([
        { role: 'system', content: 'Payment: cash, cards and UPI at the desk.' },
        { role: 'user', content: 'can I pay by card?' },
      ]),
    ).toBe('Cash, cards and UPI at the desk.');
    expect(
      plainReply([
        { role: 'system', content: system },
        { role: 'user', content: 'zebra?' },
      ]),
    ).toBe(NO_ANSWER);
    const schema = {
      type: 'object',
      properties: {
        recipient_name: { type: ['string', 'null'] },
        party_size: { type: 'integer' },
        intent: { type: 'string', enum: ['goodbye', 'repeat', 'human'] },
        date: { type: 'string', format: 'date' },
        extra: { type: 'string' },
      },
    };
    expect(schemaReply(schema, 'Book 4 seats on 2026-12-01 and send it to Kavya, then goodbye')).toEqual({
      recipient_name: 'Kavya',
      party_size: 4,
      intent: 'goodbye',
      date: '2026-12-01',
      extra: null,
    });
    expect(schemaReply(schema, 'hmm')).toEqual({ recipient_name: null, party_size: null, intent: null, date: null, extra: null });
  });
});

/**
 * The OpenAI-compatible chat-completions adapter (src/adapters/llm/openai-chat.ts) against the
 * fake model server (src/devtools/fake-llm.ts) over loopback: plain and streamed answers, usage
 * and cached tokens in both dialects, structured output, retries only before an answer began,
 * the deadline, the caller's abort, and every failure as a LanguageModelError kind whose message
 * never holds the API key; and the token usage read from each provider's fields.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIChatModel } from '../../src/adapters/llm/openai-chat.js';
import { tokenUsage, usagePartsOf, type UsageParts } from '../../src/adapters/llm/usage.js';
import { LanguageModelError, type CompletionRequest } from '../../src/app/language-model.js';
import { MESSAGE_OVERHEAD_TOKENS, tokenCount } from '../../src/devtools/fake-llm-replies.js';
import { startFakeLlm, type FakeLlm, type FakeLlmOptions } from '../../src/devtools/fake-llm.js';

const SYSTEM =
  'You are the front desk of Sunrise Clinic. The clinic is open from 9 am to 6 pm, Monday to Saturday. ' +
  'We accept cash, cards and UPI payments. Parking is free behind the building.';
const KEY = 'sk-test-SECRET-0123456789abcdef';

let fakes: FakeLlm[] = [];
afterEach(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  fakes = [];
});

async function fake(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const f = await startFakeLlm(options);
  fakes.push(f);
  return f;
}

function model(f: FakeLlm, extra: { apiKey?: string; maxRetries?: number } = {}): OpenAIChatModel {
  return new OpenAIChatModel({ baseURL: f.url, model: 'fake-llm', maxRetries: 2, ...extra });
}

function ask(question: string, extra: Partial<CompletionRequest> = {}): CompletionRequest {
  return {
    model: 'fake-llm',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: question },
    ],
    timeoutMs: 5000,
    ...extra,
  };
}

/** The fake's prompt tokens of `ask(question)`. */
const promptTokens = (question: string) => tokenCount(SYSTEM) + tokenCount(question) + 2 * MESSAGE_OVERHEAD_TOKENS;
const systemTokens = tokenCount(SYSTEM) + MESSAGE_OVERHEAD_TOKENS;

async function failure(p: Promise<unknown>): Promise<LanguageModelError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LanguageModelError);
  return err as LanguageModelError;
}

describe('OpenAIChatModel against the fake model server', { timeout: 20_000 }, () => {
  it('answers a plain request with its usage; a repeated system prompt is reported cached', async () => {
    const f = await fake();
    const lm = model(f);
    expect(lm.configured).toBe(true);
    expect(lm.defaultModel).toBe('fake-llm');
    const first = await lm.complete(ask('do you take UPI?'));
    expect(first.text).toBe('We accept cash, cards and UPI payments.');
    expect(first.finishReason).toBe('stop');
    expect(first.usage).toEqual({
      promptTokens: promptTokens('do you take UPI?'),
      completionTokens: tokenCount(first.text),
      cachedTokens: 0,
    });
    expect(first.latencyMs).toBeGreaterThan(0);
    expect(first.firstTokenMs).toBe(first.latencyMs);
    const second = await lm.complete(ask('where can I park?'));
    expect(second.text).toBe('Parking is free behind the building.');
    expect(second.usage.cachedTokens).toBe(systemTokens);
    expect(f.requests[0]!.body).toMatchObject({ model: 'fake-llm', messages: [{ role: 'system' }, { role: 'user' }] });
    expect(f.requests[0]!.body).not.toHaveProperty('stream');
  });

  it('streams deltas in order, and takes the usage from the final chunk', async () => {
    const f = await fake({ rules: [{ match: 'hours', reply: 'We are open from nine to six. Come any time.' }] });
    const deltas: string[] = [];
    const done = await model(f).stream(ask('what are your hours?', { temperature: 0.2, maxOutputTokens: 64 }), (d) => deltas.push(d));
    expect(deltas).toEqual(['We ', 'are ', 'open ', 'from ', 'nine ', 'to ', 'six. ', 'Come ', 'any ', 'time.']);
    expect(done.text).toBe(deltas.join(''));
    expect(done.finishReason).toBe('stop');
    expect(done.usage).toEqual({
      promptTokens: promptTokens('what are your hours?'),
      completionTokens: tokenCount(done.text),
      cachedTokens: 0,
    });
    expect(done.firstTokenMs).toBeLessThanOrEqual(done.latencyMs);
    expect(f.requests[0]!.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_tokens: 64,
    });
  });

  it('reads cached tokens from llama.cpp timings (cache_n, prompt_n), plain and streamed', async () => {
    const f = await fake({ dialect: 'llamacpp' });
    const lm = model(f);
    const first = await lm.complete(ask('do you take UPI?'));
    expect(first.usage.cachedTokens).toBe(0);
    const streamed = await lm.stream(ask('is parking free?'), () => {});
    expect(streamed.usage).toEqual({
      promptTokens: promptTokens('is parking free?'),
      completionTokens: tokenCount(streamed.text),
      cachedTokens: systemTokens,
    });
    const plain = await lm.complete(ask('do you take UPI?'));
    expect(plain.usage.cachedTokens).toBe(promptTokens('do you take UPI?'));
  });

  it('passes a JSON schema as response_format json_schema (strict), and gets JSON back', async () => {
    const f = await fake();
    const schema = {
      type: 'object',
      properties: { name: { type: ['string', 'null'] }, count: { type: ['integer', 'null'] }, confirm: { type: ['boolean', 'null'] } },
      required: ['name', 'count', 'confirm'],
      additionalProperties: false,
    };
    const done = await model(f).complete(ask('Send 3 tickets to Meera please, yes', { jsonSchema: { name: 'slots', schema } }));
    expect(f.requests[0]!.body!['response_format']).toEqual({ type: 'json_schema', json_schema: { name: 'slots', schema, strict: true } });
    expect(JSON.parse(done.text)).toEqual({ name: 'Meera', count: 3, confirm: true });
  });

  it('retries a 429 and a 500 with the client back-off, then fails rate_limited / server_error', async () => {
    const f = await fake({
      rules: [
        { match: 'busy', status: 429, retry_after_ms: 5 },
        { match: 'broken', status: 500, retry_after_ms: 5 },
      ],
    });
    const lm = model(f);
    const limited = await failure(lm.complete(ask('are you busy?')));
    expect(limited.kind).toBe('rate_limited');
    expect(limited.status).toBe(429);
    expect(f.requests).toHaveLength(3);
    const broken = await failure(lm.stream(ask('this is broken'), () => {}));
    expect(broken.kind).toBe('server_error');
    expect(broken.status).toBe(500);
    expect(f.requests).toHaveLength(6);
  });

  it('a 500 before the answer is retried and the retry answers', async () => {
    const f = await fake({ rules: [{ status: 503, times: 1, retry_after_ms: 5 }] });
    const done = await model(f).complete(ask('do you take UPI?'));
    expect(done.text).toContain('UPI');
    expect(f.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  it('does not retry a 400, and says refused with the status', async () => {
    const f = await fake({ rules: [{ status: 400, reply: 'model fake-x does not exist' }] });
    const err = await failure(model(f).complete(ask('hello')));
    expect(err.kind).toBe('refused');
    expect(err.status).toBe(400);
    expect(err.message).toContain('model fake-x does not exist');
    expect(f.requests).toHaveLength(1);
  });

  it('fails with timeout at the deadline: a slow answer, a hung server, slow chunks, a back-off longer than the deadline', async () => {
    const f = await fake({
      rules: [
        { match: 'slow', delay_ms: 3000 },
        { match: 'hang', mode: 'hang' },
        { match: 'chunks', reply: 'one two three four five six seven eight nine ten', chunk_delay_ms: 200 },
        { match: 'later', status: 429, retry_after_ms: 5000 },
      ],
    });
    const lm = model(f);
    for (const q of ['slow please', 'hang up', 'later please']) {
      const t0 = performance.now();
      const err = await failure(lm.complete(ask(q, { timeoutMs: 300 })));
      expect(err.kind, q).toBe('timeout');
      expect(performance.now() - t0, q).toBeLessThan(1500);
    }
    const deltas: string[] = [];
    const err = await failure(lm.stream(ask('in chunks', { timeoutMs: 900 }), (d) => deltas.push(d)));
    expect(err.kind).toBe('timeout');
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.length).toBeLessThan(10);
  });

  it('a body that is not JSON is malformed; a cut-off answer is a broken connection, never retried once streaming', async () => {
    const f = await fake({
      rules: [
        { match: 'garbled', mode: 'malformed' },
        { match: 'cut', mode: 'cut' },
      ],
    });
    const lm = model(f);
    expect((await failure(lm.complete(ask('garbled')))).kind).toBe('malformed');
    expect((await failure(lm.stream(ask('garbled'), () => {}))).kind).toBe('malformed');
    const before = f.requests.length;
    expect((await failure(lm.stream(ask('cut short'), () => {}))).kind).toBe('network');
    expect(f.requests.length - before).toBe(1);
    expect(['network', 'malformed']).toContain((await failure(lm.complete(ask('cut short')))).kind);
  });

  it('a 200 that is no chat completion is malformed: another object, text, a message that is not text', async () => {
    const bodies = ['{"hello": 1}', '{"choices": []}', '{"choices": [{"message": {"content": {"x": 1}}}]}', 'null'];
    let n = 0;
    const server = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(bodies[n++ % bodies.length]),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const lm = new OpenAIChatModel({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, model: 'm' });
      for (let i = 0; i < bodies.length; i++) expect((await failure(lm.complete(ask('hi')))).kind, bodies[i]).toBe('malformed');
      expect((await failure(lm.stream(ask('hi'), () => {}))).kind).toBe('malformed');
    } finally {
      server.close();
    }
  });

  it('connection refused is network, after the retries', async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const lm = new OpenAIChatModel({ baseURL: `http://127.0.0.1:${port}/v1`, model: 'm', maxRetries: 0 });
    const err = await failure(lm.complete(ask('hi')));
    expect(err.kind).toBe('network');
    expect(err.message).toContain('ECONNREFUSED');
    expect(err.status).toBeNull();
  });

  it("the caller's signal aborts a request under way, or before it starts", async () => {
    const f = await fake({ rules: [{ mode: 'hang' }] });
    const lm = model(f);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 100);
    expect((await failure(lm.stream(ask('hi', { signal: ctl.signal }), () => {}))).kind).toBe('aborted');
    expect((await failure(lm.complete(ask('hi', { signal: AbortSignal.abort() })))).kind).toBe('aborted');
  });

  it('sends the API key as a bearer token, a placeholder without one, and never puts the key in an error', async () => {
    const f = await fake({
      apiKey: KEY,
      rules: [{ match: 'echo', status: 500, reply: `upstream said Authorization: Bearer ${KEY} was odd; key ${KEY}` }],
    });
    const done = await model(f, { apiKey: KEY }).complete(ask('do you take UPI?'));
    expect(done.text).toContain('UPI');
    expect(f.requests[0]!.authorized).toBe(true);
    const echoed = await failure(model(f, { apiKey: KEY, maxRetries: 0 }).complete(ask('echo it')));
    expect(echoed.kind).toBe('server_error');
    expect(echoed.message).not.toContain(KEY);
    expect(echoed.message).toContain('[redacted]');
    const wrong = 'sk-wrong-key-9876543210fedcba';
    const refused = await failure(model(f, { apiKey: wrong }).complete(ask('hello')));
    expect(refused.kind).toBe('refused');
    expect(refused.status).toBe(401);
    expect(refused.message).not.toContain(wrong);
    expect(JSON.stringify(refused)).not.toContain(wrong);
    const none = await failure(model(f).complete(ask('hello')));
    expect(none.status).toBe(401);
  });

  it('needs a model name and a positive deadline', async () => {
    const f = await fake();
    expect((await failure(model(f).complete(ask('hi', { model: ' ' })))).kind).toBe('not_configured');
    for (const timeoutMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect((await failure(model(f).complete(ask('hi', { timeoutMs })))).kind).toBe('refused');
    }
    expect(f.requests).toHaveLength(0);
  });
});

describe('token usage as providers report it (src/adapters/llm/usage.ts)', () => {
  const usage = (...bodies: unknown[]) => tokenUsage(bodies.reduce<UsageParts>((parts, b) => usagePartsOf(b, parts), {}));

  it('reads OpenAI usage with cached tokens, and counts nothing missing as 0', () => {
    expect(usage({ usage: { prompt_tokens: 1200, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 1024 } } })).toEqual({
      promptTokens: 1200,
      completionTokens: 40,
      cachedTokens: 1024,
    });
    expect(usage({ choices: [] })).toEqual({ promptTokens: 0, completionTokens: 0, cachedTokens: 0 });
    expect(usage({ usage: { prompt_tokens: -3, completion_tokens: 'many', prompt_tokens_details: null } })).toEqual({
      promptTokens: 0,
      completionTokens: 0,
      cachedTokens: 0,
    });
  });

  it("prefers llama.cpp's timings over a usage that says nothing was cached", () => {
    const readme = {
      timings: { cache_n: 236, prompt_n: 1, predicted_n: 35 },
      usage: { completion_tokens: 35, prompt_tokens: 237, total_tokens: 272, prompt_tokens_details: { cached_tokens: 0 } },
    };
    expect(usage(readme)).toEqual({ promptTokens: 237, completionTokens: 35, cachedTokens: 236 });
    expect(usage({ timings: { cache_n: 10, prompt_n: 5, predicted_n: 3 } })).toEqual({
      promptTokens: 15,
      completionTokens: 3,
      cachedTokens: 10,
    });
  });

  it("takes usage and timings from whichever chunks carry them, and Groq's x_groq.usage", () => {
    expect(
      usage({ usage: null }, { choices: [], timings: { cache_n: 4, prompt_n: 6 } }, { usage: { prompt_tokens: 10, completion_tokens: 2 } }),
    ).toEqual({
      promptTokens: 10,
      completionTokens: 2,
      cachedTokens: 4,
    });
    expect(usage({ x_groq: { usage: { prompt_tokens: 50, completion_tokens: 5 } } })).toEqual({
      promptTokens: 50,
      completionTokens: 5,
      cachedTokens: 0,
    });
    expect(usage({ usage: { prompt_tokens: 5, prompt_tokens_details: { cached_tokens: 9 } } }).cachedTokens).toBe(5);
  });
});

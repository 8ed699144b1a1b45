/**
 * A local fake of an OpenAI-compatible chat-completions server: the language model adapter's
 * tests run against it, and operators can try vagent's LLM layer without a provider
 * (`npm run fake-llm`; docs/llm.md "Trying it without a provider").
 *
 * Wire formats it mirrors (https://platform.openai.com/docs/api-reference/chat):
 * - `POST /v1/chat/completions`: a `chat.completion` object, or with `stream: true` Server-Sent
 *   Events `data: {chat.completion.chunk}` — a first delta with the role, one per word, one with
 *   `finish_reason` — then, with `stream_options.include_usage`, a chunk with empty `choices` and
 *   the usage (every other chunk then has `usage: null`), and `data: [DONE]`.
 * - Usage with `prompt_tokens_details.cached_tokens` (dialect `openai`), or llama.cpp's server's
 *   `timings` (`cache_n`, `prompt_n`, `predicted_n`, `prompt_ms`, `predicted_ms`; dialect
 *   `llamacpp`) on the final completion and on the finishing chunk, and no
 *   `prompt_tokens_details`.
 * - Errors: `{"error": {"message", "type", "param", "code"}}` with the HTTP status.
 * - `GET /v1/models`: `{"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}]}`.
 *
 * Prompt caching: a request whose first messages (whole messages, in order) were all sent before
 * reports their tokens as cached — the system message's tokens on a second request with the
 * same system message. Token counts and the default replies are in ./fake-llm-replies.ts.
 *
 * Scripted replies ({@link FakeLlmRule}) come from options, {@link FakeLlm.setRules}, or
 * `PUT /control/rules` with `{"rules": [...]}`; `GET /control/requests` lists the requests seen.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { messageTokens, plainReply, schemaReply, tokenCount, type FakeMessage } from './fake-llm-replies.js';
import { parseRules, type FakeLlmRule } from './fake-llm-rules.js';

export { parseRules, type FakeLlmRule } from './fake-llm-rules.js';

/** How a server reports cached prompt tokens. */
export type FakeLlmDialect = 'openai' | 'llamacpp';

/** Options of {@link startFakeLlm}. */
export interface FakeLlmOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  dialect?: FakeLlmDialect;
  /** The model `GET /v1/models` lists (any model name is answered); default `fake-llm`. */
  model?: string;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401). */
  apiKey?: string;
  rules?: FakeLlmRule[];
  /** Told of each request answered (never its key). */
  onRequest?: (seen: FakeLlmRequest) => void;
}

/** One request the fake answered. */
export interface FakeLlmRequest {
  /** The parsed JSON body (null when it was not JSON). */
  body: Record<string, unknown> | null;
  /** Whether an `Authorization` header came, and whether it matched `apiKey` (always true without one). */
  authorized: boolean;
  /** The status answered (0 for a hang or a cut connection). */
  status: number;
  stream: boolean;
  /** The index of the rule that answered, or null for the default reply. */
  rule: number | null;
  usage: { prompt: number; cached: number; completion: number } | null;
}

/** A running fake. */
export interface FakeLlm {
  /** Base URL of the API, `http://host:port/v1` (what `llm.base_url` takes). */
  url: string;
  dialect: FakeLlmDialect;
  model: string;
  /** Every request answered, in order. */
  requests: FakeLlmRequest[];
  /** Replaces the scripted rules (and their remaining `times`). */
  setRules(rules: FakeLlmRule[]): void;
  /** Forgets the prompts seen, so nothing is cached any more. */
  clearCache(): void;
  close(): Promise<void>;
}

/** The error `type` OpenAI uses for a status. */
function errorType(status: number): string {
  if (status === 401) return 'invalid_request_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function sendError(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify({ error: { message, type: errorType(status), param: null, code: null } }));
}

function readBody(req: http.IncomingMessage, limit = 4 * 1024 * 1024): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error('body too large'));
        req.destroy();
      } else parts.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** A message's content as text: a string, or the `text` parts of an array of content parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === 'object' && p && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join('');
  }
  return '';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the fake on `host:port`.
 * @throws RangeError when a rule is malformed (see fake-llm-rules.ts)
 */
export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const dialect = options.dialect ?? 'openai';
  const model = options.model ?? 'fake-llm';
  let rules = parseRules(options.rules ?? []);
  const seenPrefixes = new Set<string>();
  const sockets = new Set<Socket>();
  let nextId = 1;

  /** Tokens of the longest run of leading messages all sent before; then remembers every prefix. */
  const cachedTokens = (messages: FakeMessage[]): number => {
    const hash = createHash('sha256');
    let cached = 0;
    let running = 0;
    let stillCached = true;
    for (const m of messages) {
      hash.update(`${m.role}\u0000${m.content}\u0001`);
      const key = hash.copy().digest('hex');
      running += messageTokens(m);
      if (stillCached && seenPrefixes.has(key)) cached = running;
      else stillCached = false;
      seenPrefixes.add(key);
    }
    return cached;
  };

  const fake: FakeLlm = {
    url: '',
    dialect,
    model,
    requests: [],
    setRules: (r) => {
      rules = parseRules(r);
    },
    clearCache: () => seenPrefixes.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };

  const handleCompletion = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const auth = req.headers.authorization ?? '';
    const authorized = options.apiKey === undefined || auth === `Bearer ${options.apiKey}`;
    const seen: FakeLlmRequest = { body: null, authorized, status: 0, stream: false, rule: null, usage: null };
    const done = (status: number) => {
      seen.status = status;
      fake.requests.push(seen);
      options.onRequest?.(seen);
    };
    let text: string;
    try {
      text = await readBody(req);
    } catch {
      sendError(res, 413, 'request body too large');
      return done(413);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      sendError(res, 400, 'We could not parse the JSON body of your request.');
      return done(400);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      sendError(res, 400, 'The body of your request must be a JSON object.');
      return done(400);
    }
    const b = body as Record<string, unknown>;
    seen.body = b;
    seen.stream = b['stream'] === true;
    if (!authorized) {
      sendError(res, 401, 'Incorrect API key provided.');
      return done(401);
    }
    if (typeof b['model'] !== 'string' || b['model'] === '') {
      sendError(res, 400, 'you must provide a model parameter');
      return done(400);
    }
    if (!Array.isArray(b['messages']) || b['messages'].length === 0) {
      sendError(res, 400, "'messages' must be a non-empty array");
      return done(400);
    }
    const messages: FakeMessage[] = (b['messages'] as unknown[]).map((m) => ({
      role: String((m as { role?: unknown })?.role ?? ''),
      content: contentText((m as { content?: unknown })?.content),
    }));
    const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const ruleIndex = rules.findIndex((r) => r.remaining !== 0 && (r.match === null || r.match.test(lastUser)));
    const rule = ruleIndex >= 0 ? rules[ruleIndex]! : null;
    if (rule && rule.remaining > 0) rule.remaining -= 1;
    seen.rule = rule ? ruleIndex : null;

    if (rule?.delay_ms) await sleep(rule.delay_ms);
    if (rule?.mode === 'hang') return done(0); // never answered; the socket closes with the fake
    if (rule?.status !== undefined && rule.status !== 200) {
      const headers: Record<string, string> = rule.retry_after_ms !== undefined ? { 'retry-after-ms': String(rule.retry_after_ms) } : {};
      sendError(res, rule.status, rule.reply ?? `the fake answers ${rule.status} (scripted)`, headers);
      return done(rule.status);
    }

    const format = b['response_format'] as { type?: unknown; json_schema?: { schema?: unknown } } | undefined;
    let reply: string;
    if (rule?.json !== undefined) reply = JSON.stringify(rule.json);
    else if (rule?.reply !== undefined) reply = rule.reply;
    else if (format?.type === 'json_schema') reply = JSON.stringify(schemaReply(format.json_schema?.schema, lastUser));
    else if (format?.type === 'json_object') reply = '{}';
    else reply = plainReply(messages);
    let finish = 'stop';
    const maxTokens =
      typeof b['max_tokens'] === 'number'
        ? b['max_tokens']
        : typeof b['max_completion_tokens'] === 'number'
          ? b['max_completion_tokens']
          : null;
    if (maxTokens !== null && tokenCount(reply) > maxTokens) {
      reply = reply.slice(0, Math.max(0, maxTokens) * 4);
      finish = 'length';
    }
    const promptTokens = messages.reduce((n, m) => n + messageTokens(m), 0);
    const cached = cachedTokens(messages);
    const completion = tokenCount(reply);
    seen.usage = { prompt: promptTokens, cached, completion };
    const usage =
      dialect === 'openai'
        ? {
            prompt_tokens: promptTokens,
            completion_tokens: completion,
            total_tokens: promptTokens + completion,
            prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
            completion_tokens_details: {
              reasoning_tokens: 0,
              audio_tokens: 0,
              accepted_prediction_tokens: 0,
              rejected_prediction_tokens: 0,
            },
          }
        : { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
    const timings =
      dialect === 'llamacpp'
        ? { cache_n: cached, prompt_n: promptTokens - cached, prompt_ms: 1, predicted_n: completion, predicted_ms: 1 }
        : undefined;
    const id = `chatcmpl-fake${nextId++}`;
    const created = Math.floor(Date.now() / 1000);
    const name = b['model'];

    if (!seen.stream) {
      const json = JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model: name,
        choices: [{ index: 0, message: { role: 'assistant', content: reply, refusal: null }, logprobs: null, finish_reason: finish }],
        usage,
        ...(timings ? { timings } : {}),
        system_fingerprint: null,
      });
      if (rule?.mode === 'malformed') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(json.slice(0, Math.floor(json.length / 2)));
        return done(200);
      }
      if (rule?.mode === 'cut') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) });
        res.write(json.slice(0, Math.floor(json.length / 2)));
        await sleep(5);
        res.socket?.destroy();
        return done(0);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(json);
      return done(200);
    }

    const includeUsage = (b['stream_options'] as { include_usage?: unknown } | undefined)?.include_usage === true;
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: name, system_fingerprint: null, choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`;
    const events: string[] = [chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }])];
    for (const piece of reply.match(/\S+\s*|\s+/g) ?? []) {
      events.push(chunk([{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }]));
    }
    events.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }], timings ? { timings } : {}));
    if (includeUsage) events.push(chunk([], { usage, ...(timings ? { timings } : {}) }));
    events.push('data: [DONE]\n\n');
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const cutAt = rule?.mode === 'cut' ? Math.max(1, Math.floor(events.length / 2)) : -1;
    for (let i = 0; i < events.length; i++) {
      if (i === cutAt) {
        await sleep(5);
        res.socket?.destroy();
        return done(0);
      }
      if (rule?.mode === 'malformed' && i === 1) res.write('data: {"choices": [{"delta": {"content": "oops"\n\n');
      else res.write(events[i]);
      if (rule?.chunk_delay_ms && i < events.length - 1) await sleep(rule.chunk_delay_ms);
      if (res.destroyed) return done(0);
    }
    res.end();
    return done(200);
  };

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = `${req.method} ${path}`;
    if (route === 'POST /v1/chat/completions') {
      handleCompletion(req, res).catch(() => res.destroy());
    } else if (route === 'GET /v1/models') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'vagent-fake' }] }));
    } else if (route === 'PUT /control/rules' || route === 'POST /control/rules') {
      readBody(req)
        .then((text) => {
          const parsed = JSON.parse(text) as { rules?: unknown };
          fake.setRules(parsed.rules as FakeLlmRule[]);
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ rules: rules.length }));
        })
        .catch((err: unknown) => sendError(res, 400, `bad rules: ${(err as Error).message}`));
    } else if (route === 'GET /control/requests') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ requests: fake.requests }));
    } else {
      sendError(res, 404, `no route ${route}`);
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  fake.url = `http://${host}:${addr.port}/v1`;
  return fake;
}

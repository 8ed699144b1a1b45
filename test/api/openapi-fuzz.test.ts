/**
 * A Schemathesis-style check (docs/api-decisions.md "Errors" › Request shapes): requests generated
 * from the served OpenAPI document — every operation, path and query parameters and bodies in the
 * shapes the document says are valid (patterns, lengths, bounds, enums, required properties) — sent
 * with a valid API key. None may fail with a 5xx, and none may be refused for its shape: a 400
 * `invalid_request` for a request the document calls valid is a failure. Refusals by a business
 * rule with their documented codes (not_found, trunk_not_found, already_exists,
 * telephony_not_configured, 422s, …) are fine.
 *
 * The generator reads only the document, so routes added later are covered as they appear.
 * Ids the server hands out (in any response) are kept by the name of the parameter whose
 * pattern they match and reused in later requests, so requests reach real sessions, trunks
 * and numbers and not only "not found". Deterministic: fixed seeds, a bounded count.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, isErrorCode } from '../../src/domain/errors.js';
import { makeTestApp, tempDir, type TestApp } from '../support/app.js';
import { fieldsOf, nonNull, operationsOf, patternOf, servedDocument, urlOf, valuesOf, type Operation } from '../support/openapi.js';

/** Rounds over every operation (about 25 operations: a few hundred requests). */
const ROUNDS = 12;
const SEED = 1414;

/**
 * Refusals that depend on the state, not the request's shape, though their code is
 * `invalid_request` (docs/api-decisions.md "Errors"): `METHOD path` → the `param` they name.
 */
const STATE_RULES = new Map<string, Set<string>>([
  // Dialling with zero or several trunks and no trunk_id; or through a trunk with no caller ID.
  ['POST /v1/calls', new Set(['trunk_id', 'from'])],
  // A number answers inbound calls: an outbound agent (a state of the agent, not the request's shape) is refused.
  ['POST /v1/numbers', new Set(['agent_id'])],
  ['POST /v1/numbers/{number}/bind', new Set(['agent_id'])],
  // A webhook URL is judged by the allow settings and by what its host resolves to (docs/events.md "Webhooks").
  ['POST /v1/webhook_endpoints', new Set(['url'])],
]);

/** 5xx codes that are documented refusals of this deployment, not failures. */
const DOCUMENTED_5XX = new Set(['telephony_not_configured']);

/** A seeded pseudo-random source for choices (which pool value, whether to use one). */
function chooser(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** True when an operation's body is a free-form object: the document promises no shape, so none can be generated valid. */
const freeFormBody = (op: Operation): boolean => {
  const body = op.body === undefined ? null : nonNull(op.body);
  return body !== null && body.type === 'object' && Object.keys(body.properties ?? {}).length === 0;
};

let t: TestApp;
let ops: Operation[];

beforeAll(async () => {
  // No shipped agents: the two below are the tenant's, so no agent brings rules of its own.
  t = await makeTestApp({ agents_dir: tempDir('vagent-no-agents-') });
  ops = operationsOf(await servedDocument(t));
});
afterAll(async () => t.close());

describe('requests generated from the served OpenAPI document', () => {
  it('are never answered 5xx, and never refused for a shape the document calls valid', async () => {
    const random = chooser(SEED);
    // Values seen in responses, by the name of the field whose pattern they match.
    const patterns = new Map<string, RegExp>();
    for (const f of ops.flatMap(fieldsOf)) {
      const s = nonNull(f.schema);
      const re = s === null ? null : patternOf(s);
      if (re !== null && !f.path.includes('.') && !f.path.includes('[]')) patterns.set(f.name, re);
    }
    const pools = new Map<string, Set<string>>([...patterns.keys()].map((k) => [k, new Set<string>()]));
    const harvest = (node: unknown): void => {
      if (typeof node === 'string') {
        for (const [name, re] of patterns) if (re.test(node)) pools.get(name)!.add(node);
      } else if (Array.isArray(node)) node.forEach(harvest);
      else if (node && typeof node === 'object') Object.values(node).forEach(harvest);
    };
    const AGENTS = ['ag_fuzz_inbound', 'ag_fuzz_outbound'] as const;
    /**
     * A pool value for `name` most of the time, when there is one; else `generated`. Only values
     * matching `schema`'s own pattern are offered: a name may have a pattern per operation
     * (each list has its own cursor).
     */
    const pick = (name: string, generated: unknown, schema?: unknown): unknown => {
      const s = schema === undefined ? null : nonNull(schema as Parameters<typeof nonNull>[0]);
      const own = s === null ? null : patternOf(s);
      const pool = [...(pools.get(name) ?? [])].filter((v) => own === null || own.test(v));
      return pool.length > 0 && random() < 0.7 ? pool[Math.floor(random() * pool.length)] : generated;
    };

    const failures: string[] = [];
    const seen = new Map<string, number>();
    let sent = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // The document's PUT body is free-form, so generated agents are refused: each round
      // starts with the two agents back, whatever a generated DELETE removed.
      await t.agent(AGENTS[0]);
      await t.agent(AGENTS[1], { direction: 'outbound' });
      harvest([...AGENTS]);
      for (const [i, op] of ops.entries()) {
        const seed = SEED + round * 1000 + i;
        const params: Record<string, unknown> = {};
        const query: Record<string, unknown> = {};
        for (const [j, p] of op.parameters.entries()) {
          const [value] = fc.sample(valuesOf(p.schema), { seed: seed * 31 + j, numRuns: 1 });
          if (p.in === 'path') params[p.name] = pick(p.name, value, p.schema);
          else if (p.in === 'query' && (p.required || random() < 0.6)) query[p.name] = pick(p.name, value, p.schema);
        }
        let body: unknown;
        if (op.body) {
          [body] = fc.sample(valuesOf(op.body), { seed: seed * 17, numRuns: 1 });
          if (body && typeof body === 'object' && !Array.isArray(body)) {
            for (const key of Object.keys(body)) (body as Record<string, unknown>)[key] = pick(key, (body as Record<string, unknown>)[key]);
          }
        }
        const url = urlOf(op, params, query);
        const res = await t.call(op.method, url, body);
        sent += 1;
        const label = `${op.method} ${op.path}`;
        let parsed: unknown = null;
        try {
          parsed = res.body.length > 0 && /json/.test(String(res.headers['content-type'])) ? res.json() : null;
        } catch {
          failures.push(`${label} ${res.statusCode}: a body that is not JSON`);
        }
        const error = (parsed as { error?: { code?: unknown; message?: unknown; param?: unknown } } | null)?.error;
        const outcome = error ? String(error.code) : String(res.statusCode);
        seen.set(`${label} → ${outcome}`, (seen.get(`${label} → ${outcome}`) ?? 0) + 1);
        const request = `${op.method} ${url.slice(0, 120)} ${JSON.stringify(body ?? null).slice(0, 300)}`;
        if (res.statusCode >= 400) {
          if (!error || !isErrorCode(error.code) || (ERROR_STATUS[error.code] !== res.statusCode && error.code !== 'invalid_request')) {
            failures.push(`${request} → ${res.statusCode} not in the API's error shape: ${res.body.slice(0, 200)}`);
            continue;
          }
        }
        if (res.statusCode >= 500 && !DOCUMENTED_5XX.has(String(error?.code))) {
          failures.push(`${request} → ${res.statusCode} ${res.body.slice(0, 300)}`);
        } else if (error?.code === 'invalid_request' && !freeFormBody(op) && !STATE_RULES.get(label)?.has(String(error.param))) {
          failures.push(`${request} → refused for its shape: ${String(error.param)}: ${String(error.message)}`);
        }
        if (res.statusCode < 300) harvest(parsed);
        // What a DELETE removed is not offered again.
        if (res.statusCode < 300 && op.method === 'DELETE') {
          for (const [name, value] of Object.entries(params)) pools.get(name)?.delete(String(value));
        }
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBe(ROUNDS * ops.length);
    // It went past "not found": sessions opened and turned, trunks and numbers created, calls prepared,
    // carrier credentials stored and a stream token made.
    for (const reached of [
      'POST /v1/sessions → 201',
      'POST /v1/sessions/{session_id}/turn → 200',
      'POST /v1/trunks → 201',
      'POST /v1/numbers → 201',
      'POST /v1/calls → 201',
      'PUT /v1/carriers/twilio → 200',
      'PUT /v1/carriers/plivo → 200',
      'PUT /v1/carriers/exotel → 200',
      'POST /v1/carriers/stream_token → 201',
    ]) {
      expect([...seen.keys()], reached).toContain(reached);
    }
  }, 120_000);
});

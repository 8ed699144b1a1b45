/**
 * A value refused for a bound says what is wrong (docs/api-decisions.md "Errors"): an over-long
 * `auth.password` is "auth.password: at most 1024 characters", not "is required and must be
 * a string". Checked for every bound the served document publishes — each maximum and
 * minimum length, numeric bound and array size of every operation — by sending a request
 * valid in every other respect with that one field just past its bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';
import {
  fieldsOf,
  nonNull,
  operationsOf,
  sampleOne,
  servedDocument,
  urlOf,
  valuesOf,
  type Field,
  type Operation,
} from '../support/openapi.js';

/** One field pushed past one of its bounds. */
interface Case {
  field: Field;
  bound: string;
  limit: number;
  value: unknown;
}

/** The values of `field` just past each bound its schema publishes. */
function casesOf(field: Field): Case[] {
  const s = nonNull(field.schema);
  if (s === null) return [];
  const cases: Case[] = [];
  if (s.type === 'string') {
    if (s.maxLength !== undefined) cases.push({ field, bound: 'maxLength', limit: s.maxLength, value: 'x'.repeat(s.maxLength + 1) });
    if (s.minLength !== undefined && s.minLength > 0) cases.push({ field, bound: 'minLength', limit: s.minLength, value: '' });
  } else if (s.type === 'integer' || s.type === 'number') {
    if (s.maximum !== undefined) cases.push({ field, bound: 'maximum', limit: s.maximum, value: s.maximum + 1 });
    if (s.minimum !== undefined) cases.push({ field, bound: 'minimum', limit: s.minimum, value: s.minimum - 1 });
  } else if (s.type === 'array' && s.maxItems !== undefined && s.items) {
    const item = sampleOne(valuesOf(s.items, { full: true }), 7);
    cases.push({ field, bound: 'maxItems', limit: s.maxItems, value: Array.from({ length: s.maxItems + 1 }, () => item) });
  }
  return cases;
}

/** `base` with the value at `path` (`auth.password`) replaced. */
function withField(base: unknown, path: string, value: unknown): unknown {
  const copy = structuredClone(base) as Record<string, unknown>;
  const keys = path.split('.');
  let node = copy;
  for (const k of keys.slice(0, -1)) node = node[k] as Record<string, unknown>;
  node[keys[keys.length - 1]!] = value;
  return copy;
}

/** The request of `c`: every other parameter and property valid. */
function requestOf(op: Operation, c: Case): { url: string; body: unknown } {
  const params: Record<string, unknown> = {};
  for (const p of op.parameters) if (p.in === 'path') params[p.name] = sampleOne(valuesOf(p.schema, { full: true }), 1);
  const query: Record<string, unknown> = {};
  if (c.field.in === 'path') params[c.field.path] = c.value;
  if (c.field.in === 'query') query[c.field.path] = c.value;
  let body: unknown;
  if (op.body) {
    body = sampleOne(valuesOf(op.body, { full: true }), 3);
    if (c.field.in === 'body') body = withField(body, c.field.path, c.value);
  }
  return { url: urlOf(op, params, query), body };
}

let t: TestApp;
let cases: Case[];

beforeAll(async () => {
  t = await makeTestApp();
  const ops = operationsOf(await servedDocument(t));
  cases = ops
    .flatMap(fieldsOf)
    .filter((f) => f.in !== 'path' && !f.path.includes('[]'))
    .flatMap(casesOf);
});
afterAll(async () => t.close());

describe('a value past a published bound is refused with a message naming the field and the bound', () => {
  it('covers the bounds of every operation, auth.password among them', () => {
    const names = cases.map((c) => `${c.field.op.method} ${c.field.op.path} ${c.field.path} ${c.bound}`);
    expect(names).toContain('POST /v1/trunks auth.password maxLength');
    expect(names).toContain('POST /v1/sessions/{session_id}/turn text maxLength');
    expect(cases.length).toBeGreaterThan(25);
  });

  it('says "auth.password: at most 1024 characters" for an over-long trunk password', async () => {
    const res = await t.call('POST', '/v1/trunks', {
      address: 'sip.example.in',
      auth: { username: 'u', password: 'p'.repeat(1025) },
    });
    expect(expectError(res, 400, 'invalid_request', 'auth.password').message).toBe('auth.password: at most 1024 characters');
    expect(res.body).not.toContain('ppppp');
  });

  it('names the field and the bound for each, and never calls a present value missing or of the wrong type', async () => {
    const wrong: string[] = [];
    for (const c of cases) {
      const { url, body } = requestOf(c.field.op, c);
      const res = await t.call(c.field.op.method, url, body);
      const where = `${c.field.op.method} ${url.slice(0, 80)} ${c.field.path} ${c.bound}`;
      const error = expectError(res, 400, 'invalid_request', c.field.path);
      const message = error.message;
      const mentionsBound =
        message.includes(String(c.limit)) || (c.bound === 'minLength' && /empty|at least/.test(message)) || /SIP host/.test(message);
      if (!message.startsWith(c.field.path) || !mentionsBound || /required|must be a (string|number)\b(?! from)/.test(message)) {
        wrong.push(`${where}: ${message}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});

/**
 * The served OpenAPI document publishes what the server enforces (docs/api-decisions.md "Errors" ›
 * Request shapes): every path parameter, query parameter and body property of every operation that
 * the server constrains carries the server's own pattern and bounds — taken here from the constants
 * the server validates with, never copied by hand — and no string field is left unbounded.
 */
import { EVENT_ID_PATTERN } from '../../src/domain/events.js';
import { WEBHOOK_ENDPOINT_ID_PATTERN } from '../../src/domain/webhooks.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIAL_LIMITS } from '../../src/domain/calls.js';
import { CALLS_CURSOR, SESSIONS_CURSOR } from '../../src/domain/cursor.js';
import { E164_PATTERN } from '../../src/domain/e164.js';
import { ID_PATTERNS } from '../../src/domain/ids.js';
import { MAX_SIP_ADDRESS_LENGTH, SIP_ADDRESS_PATTERN } from '../../src/domain/sip.js';
import { ISO_TIME_PATTERN } from '../../src/domain/time.js';
import {
  CARRIER_SECRET_PATTERN,
  EXOTEL_API_KEY_PATTERN,
  MAX_TURN_TEXT,
  NON_BLANK_TEXT,
  PLIVO_AUTH_ID_PATTERN,
  TWILIO_ACCOUNT_SID_PATTERN,
  UNICODE_TEXT,
} from '../../src/contract/index.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { fieldsOf, nonNull, operationsOf, servedDocument, type Field, type JsonSchema, type Operation } from '../support/openapi.js';

/** What the server enforces on a field, by the field's name (the same name means the same rule everywhere). */
type Rule = Pick<JsonSchema, 'pattern' | 'minLength' | 'maxLength' | 'minimum' | 'maximum'>;
const e164: Rule = { pattern: E164_PATTERN.source };
const freeText = (max: number): Rule => ({ pattern: UNICODE_TEXT.source, maxLength: max });
const RULES: Record<string, Rule> = {
  trunk_id: { pattern: ID_PATTERNS.trunk.source },
  agent_id: { pattern: ID_PATTERNS.agent.source },
  session_id: { pattern: ID_PATTERNS.session.source },
  call_id: { pattern: ID_PATTERNS.call.source },
  number: e164,
  'numbers[]': e164,
  to: e164,
  from: e164,
  customer_phone: e164,
  address: { pattern: SIP_ADDRESS_PATTERN.source, minLength: 1, maxLength: MAX_SIP_ADDRESS_LENGTH },
  text: { pattern: NON_BLANK_TEXT.source, minLength: 1, maxLength: MAX_TURN_TEXT },
  now: { pattern: ISO_TIME_PATTERN.source },
  limit: { minimum: 1, maximum: 100 },
  ringing_timeout_s: { minimum: DIAL_LIMITS.ringing_timeout_s.min, maximum: DIAL_LIMITS.ringing_timeout_s.max },
  max_call_duration_s: { minimum: DIAL_LIMITS.max_call_duration_s.min, maximum: DIAL_LIMITS.max_call_duration_s.max },
  name: freeText(200),
  label: freeText(200),
  title: freeText(200),
  customer_name: freeText(200),
  account_sid: { pattern: TWILIO_ACCOUNT_SID_PATTERN.source },
  auth_id: { pattern: PLIVO_AUTH_ID_PATTERN.source },
  api_key: { pattern: EXOTEL_API_KEY_PATTERN.source },
  auth_token: { pattern: CARRIER_SECRET_PATTERN.source },
  api_token: { pattern: CARRIER_SECRET_PATTERN.source },
  webhook_endpoint_id: { pattern: WEBHOOK_ENDPOINT_ID_PATTERN.source },
  endpoint_id: { pattern: WEBHOOK_ENDPOINT_ID_PATTERN.source },
  event_id: { pattern: EVENT_ID_PATTERN.source },
  since: { minimum: 1, maximum: 604_800 },
  url: { minLength: 1, maxLength: 2048 },
};

/** Fields whose rule depends on the operation (`METHOD path name`): each list has its own cursors. */
const OPERATION_RULES: Record<string, Rule> = {
  'GET /v1/calls cursor': { pattern: CALLS_CURSOR.pattern.source },
  'GET /v1/sessions cursor': { pattern: SESSIONS_CURSOR.pattern.source },
};

/** The rule of field `f`: its operation's own, else its name's. */
const ruleOf = (f: Field): Rule | undefined => OPERATION_RULES[`${f.op.method} ${f.op.path} ${f.name}`] ?? RULES[f.name];

/**
 * String fields the server takes as they come, each with its reason. Everything else must
 * carry a pattern, an enum or a maximum length.
 */
const UNBOUNDED = new Map<string, string>([
  // A capability: any name that is not a cached clip's is simply not found, never refused.
  ['GET /v1/audio/{file} file', 'audio names are capabilities'],
]);

let t: TestApp;
let ops: Operation[];
let fields: Field[];

beforeAll(async () => {
  t = await makeTestApp();
  ops = operationsOf(await servedDocument(t));
  fields = ops.flatMap(fieldsOf);
});
afterAll(async () => t.close());

const where = (f: Field) => `${f.op.method} ${f.op.path} ${f.in} ${f.path}`;

describe('GET /v1/openapi.json publishes what the server enforces', () => {
  it('walks the operations of every route family', () => {
    const paths = new Set(ops.map((o) => o.path));
    for (const p of [
      '/v1/trunks/{trunk_id}',
      '/v1/numbers/{number}/bind',
      '/v1/agents/{agent_id}',
      '/v1/sessions/{session_id}/turn',
      '/v1/calls',
      '/v1/calls/{call_id}',
    ]) {
      expect(paths).toContain(p);
    }
    expect(fields.length).toBeGreaterThan(40);
  });

  it('gives every field the server constrains its pattern and bounds', () => {
    const checked: string[] = [];
    for (const f of fields) {
      const rule = ruleOf(f);
      if (!rule) continue;
      const schema = nonNull(f.schema);
      expect(schema, where(f)).not.toBeNull();
      const published: Rule = {};
      for (const key of Object.keys(rule) as (keyof Rule)[]) {
        if (schema![key] !== undefined) (published as Record<string, unknown>)[key] = schema![key];
      }
      expect(published, where(f)).toEqual(rule);
      checked.push(where(f));
    }
    // Every path parameter is an id or a number, and each is checked above.
    for (const f of fields.filter((x) => x.in === 'path')) {
      if (!UNBOUNDED.has(`${f.op.method} ${f.op.path} ${f.path}`)) expect(checked, `${where(f)} has no rule`).toContain(where(f));
    }
    expect(checked.length).toBeGreaterThan(30);
  });

  it('leaves no string field unbounded: each has a pattern, an enum or a maximum length', () => {
    const unbounded = fields.filter((f) => {
      const s = nonNull(f.schema);
      if (s === null || s.type !== 'string') return false;
      if (UNBOUNDED.has(`${f.op.method} ${f.op.path} ${f.path}`)) return false;
      return s.pattern === undefined && s.enum === undefined && s.maxLength === undefined;
    });
    expect(unbounded.map(where)).toEqual([]);
  });

  it('publishes the same rule for a field under the same name on every operation (cursors: one per list)', () => {
    const byName = new Map<string, Set<string>>();
    for (const f of fields) {
      const s = nonNull(f.schema);
      if (s === null || s.type !== 'string' || (f.in === 'body' && f.path.includes('.'))) continue;
      if (OPERATION_RULES[`${f.op.method} ${f.op.path} ${f.name}`]) continue;
      const rule = JSON.stringify({ pattern: s.pattern, minLength: s.minLength, maxLength: s.maxLength });
      byName.set(f.name, (byName.get(f.name) ?? new Set()).add(rule));
    }
    for (const [name, rules] of byName) expect([...rules], name).toHaveLength(1);
  });
});

/**
 * The served OpenAPI document (`GET /v1/openapi.json`) is a valid OpenAPI 3.1 document, as two
 * independent validators judge it: `@apidevtools/swagger-parser` (the OpenAPI schema and its
 * own structural checks, `$ref`s resolved) and `@seriousme/openapi-schema-validator` (the
 * OpenAPI Initiative's published JSON Schema for 3.1, https://spec.openapis.org/oas/3.1/schema).
 * Generated clients and fuzzers check responses against it, so an invalid document leaves them
 * checking nothing.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let doc: Record<string, unknown>;

beforeAll(async () => {
  t = await makeTestApp();
  const res = await t.call('GET', '/v1/openapi.json', undefined, { key: null });
  expect(res.statusCode).toBe(200);
  doc = res.json() as Record<string, unknown>;
});
afterAll(async () => {
  await t.close();
});

/** Every `$id` anywhere in `node`, with its JSON path. */
function ids(node: unknown, at = '#'): string[] {
  if (Array.isArray(node)) return node.flatMap((v, i) => ids(v, `${at}/${i}`));
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([k, v]) => (k === '$id' ? [`${at}: ${JSON.stringify(v)}`] : ids(v, `${at}/${k}`)));
}

describe('GET /v1/openapi.json', () => {
  it('carries no $id (a fragment $id such as "#/components/schemas/Call" is invalid JSON Schema 2020-12, §8.2.1)', () => {
    expect(ids(doc)).toEqual([]);
  });

  it('has component schemas valid against the JSON Schema 2020-12 meta-schema (OpenAPI 3.1 §4.8.24)', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const schemas = (doc['components'] as { schemas: Record<string, object> }).schemas;
    const invalid = Object.entries(schemas)
      .filter(([, s]) => !ajv.validateSchema(s))
      .map(([name]) => `${name}: ${ajv.errorsText()}`);
    expect(invalid).toEqual([]);
  });

  it('is valid to @apidevtools/swagger-parser', async () => {
    // validate() dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('is valid to @seriousme/openapi-schema-validator (the OpenAPI 3.1 JSON Schema)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });
});

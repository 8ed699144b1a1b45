/**
 * Assertions shared by the API tests: the error body and headers of docs/api-decisions.md "Errors".
 */
import type { ListResponse, NumberRecord, Trunk } from '../../src/contract/index.js';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

/** The `X-Request-Id` format the app generates (`req_` + 12 base64url characters). */
export const REQUEST_ID = /^req_[A-Za-z0-9_-]{12}$/;

/**
 * Asserts `res` is an error response of docs/api-decisions.md "Errors": the status, a JSON body of
 * exactly `{error: {code, message, param?}}` with a non-empty message, and an `X-Request-Id`
 * header. `param` undefined means "not checked"; null means "must be absent".
 *
 * @returns the error object, for further checks on the message.
 */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  param?: string | null,
): { code: string; message: string; param?: string } {
  expect({ status: res.statusCode, body: res.body.slice(0, 300) }).toMatchObject({ status });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  const body = res.json() as { error: { code: string; message: string; param?: string } };
  expect(Object.keys(body)).toEqual(['error']);
  const keys = Object.keys(body.error);
  expect(keys.every((k) => ['code', 'message', 'param'].includes(k))).toBe(true);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  if (body.error.param !== undefined) expect(typeof body.error.param).toBe('string');
  if (param === null) expect(body.error).not.toHaveProperty('param');
  else if (param !== undefined) expect(body.error.param).toBe(param);
  return body.error;
}

/** Asserts a success status and returns the parsed JSON body. */
export function expectOk<T = Record<string, unknown>>(res: LightMyRequestResponse, status: number): T {
  expect({ status: res.statusCode, body: res.body.slice(0, 300) }).toMatchObject({ status });
  expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  return res.json() as T;
}

/** A trunk as returned by the API. */
export type TrunkBody = Trunk;
/** A number record as returned by the API. */
export type NumberBody = NumberRecord;

/** A list response. */
export type ListBody<T> = ListResponse<T>;

/** Creates a trunk (201 expected) with `key` (default tenant's when omitted). */
export async function createTrunk(
  t: TestApp,
  body: Record<string, unknown> = { address: 'sip.example-carrier.in' },
  key?: string,
): Promise<TrunkBody> {
  return expectOk<TrunkBody>(await t.call('POST', '/v1/trunks', body, key === undefined ? {} : { key }), 201);
}

/** Registers a number (201 expected) with `key` (default tenant's when omitted). */
export async function createNumber(t: TestApp, body: Record<string, unknown>, key?: string): Promise<NumberBody> {
  return expectOk<NumberBody>(await t.call('POST', '/v1/numbers', body, key === undefined ? {} : { key }), 201);
}

/** The caller's trunks (GET /v1/trunks). */
export async function listTrunks(t: TestApp, key?: string): Promise<TrunkBody[]> {
  return expectOk<ListBody<TrunkBody>>(await t.call('GET', '/v1/trunks', undefined, key === undefined ? {} : { key }), 200).data;
}

/** The caller's number records (GET /v1/numbers). */
export async function listNumbers(t: TestApp, key?: string): Promise<NumberBody[]> {
  return expectOk<ListBody<NumberBody>>(await t.call('GET', '/v1/numbers', undefined, key === undefined ? {} : { key }), 200).data;
}

/** `+` URL-encoded as `%2B`, as the spec asks for `{number}` path parameters. */
export const enc = (number: string): string => encodeURIComponent(number);

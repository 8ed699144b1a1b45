/**
 * `source` of a call (docs/api-decisions.md "Simulated calls"): `phone` for calls on a line,
 * `simulator` for the streams `vagent call simulate` opens; shown by `GET /v1/calls/{id}` and
 * `GET /v1/calls`, which filters by it (`?source=`), and documented in the OpenAPI document.
 * Stream calls are opened through the media-calls service as a stream's `start` opens them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';
import { expectError } from '../support/expect.js';
import type { CallSource } from '../../src/domain/calls.js';

let t: TestApp;
let tenantId: string;

beforeAll(async () => {
  t = await makeTestApp();
  tenantId = t.runtime.services.tenants.authenticate(t.key)!.tenantId;
  await t.agent('ag_inbound_test');
});
afterAll(async () => t.close());

let streams = 0;
/** Opens an inbound call as a carrier stream's `start` would, labelled `source`. */
async function streamCall(source?: CallSource): Promise<string> {
  const opened = await t.runtime.services.media.open(tenantId, {
    dialect: 'exotel',
    carrierCallId: `CA-source-${++streams}`,
    from: '+919812345678',
    to: '+918045671234',
    params: { agent_id: 'ag_inbound_test' },
    ...(source ? { source } : {}),
  });
  return `cl_${opened.n}`;
}

/** Prepares an outbound call and attaches a stream labelled `source` to it. */
async function preparedStream(source: CallSource): Promise<string> {
  const res = await t.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' });
  expect(res.statusCode, res.body).toBe(201);
  const callId = res.json<{ call_id: string }>().call_id;
  await t.runtime.services.media.open(tenantId, {
    dialect: 'twilio',
    carrierCallId: `CA-source-${++streams}`,
    params: { call_id: callId },
    source,
  });
  return callId;
}

const getSource = async (id: string): Promise<unknown> => (await t.call('GET', `/v1/calls/${id}`)).json<{ source: string }>().source;
const listIds = async (query: string): Promise<string[]> => {
  const res = await t.call('GET', `/v1/calls${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: Array<{ call_id: string }> }>().data.map((c) => c.call_id);
};

describe('the source of a call', () => {
  it('is phone for a prepared call and a carrier stream, simulator for a simulated stream, new or prepared', async () => {
    const prepared = await t.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' });
    const preparedId = prepared.json<{ call_id: string }>().call_id;
    expect(await getSource(preparedId)).toBe('phone');
    expect(await getSource(await streamCall())).toBe('phone');
    expect(await getSource(await streamCall('phone'))).toBe('phone');
    expect(await getSource(await streamCall('simulator'))).toBe('simulator');
    expect(await getSource(await preparedStream('simulator'))).toBe('simulator');
    expect(await getSource(await preparedStream('phone'))).toBe('phone');
  });

  it('GET /v1/calls shows it and filters by it, page by page', async () => {
    const sims = [await streamCall('simulator'), await streamCall('simulator'), await streamCall('simulator')];
    const phone = await streamCall();
    const all = await t.call('GET', '/v1/calls?limit=100');
    const rows = all.json<{ data: Array<{ call_id: string; source: string }> }>().data;
    expect(rows.every((r) => r.source === 'phone' || r.source === 'simulator')).toBe(true);
    expect(rows.find((r) => r.call_id === phone)?.source).toBe('phone');

    const simulated = await listIds('?source=simulator&limit=100');
    expect(simulated).toEqual(expect.arrayContaining(sims));
    expect(simulated).not.toContain(phone);
    for (const id of simulated) expect(await getSource(id)).toBe('simulator');
    expect(await listIds('?source=phone&limit=100')).toContain(phone);
    expect(await listIds('?source=phone&limit=100')).not.toContain(sims[0]);

    // Pages of one source follow next_cursor, newest first.
    const first = (await t.call('GET', '/v1/calls?source=simulator&limit=2')).json<{
      data: Array<{ call_id: string }>;
      has_more: boolean;
      next_cursor: string;
    }>();
    expect(first.data.map((c) => c.call_id)).toEqual([sims[2], sims[1]]);
    expect(first.has_more).toBe(true);
    const second = await listIds(`?source=simulator&limit=2&cursor=${first.next_cursor}`);
    expect(second[0]).toBe(sims[0]);
    // With status: open simulated calls only.
    expect(await listIds('?source=simulator&status=in_progress&limit=100')).toEqual(expect.arrayContaining(sims));
    expect(await listIds('?source=simulator&status=completed&limit=100')).not.toContain(sims[0]);
  });

  it('refuses an unknown source with 400 invalid_request naming source', async () => {
    const res = await t.call('GET', '/v1/calls?source=carrier');
    const err = expectError(res, 400, 'invalid_request', 'source');
    expect(err.message).toContain('source must be phone or simulator');
  });

  it('is documented in the OpenAPI document: the call resource and the list filter', async () => {
    const doc = (await t.call('GET', '/v1/openapi.json')).json<{
      components: {
        schemas: Record<string, { properties: Record<string, { enum?: string[]; description?: string }>; required?: string[] }>;
      };
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; schema: { enum?: string[] } }> }>>;
    }>();
    const status = doc.components.schemas.CallStatus!;
    expect(status.properties.source).toMatchObject({
      enum: ['phone', 'simulator'],
      description: expect.stringContaining('vagent call simulate'),
    });
    expect(status.required).toContain('source');
    const filter = doc.paths['/v1/calls']!.get!.parameters!.find((p) => p.name === 'source');
    expect(filter).toMatchObject({ in: 'query', schema: { enum: ['phone', 'simulator'] } });
  });
});

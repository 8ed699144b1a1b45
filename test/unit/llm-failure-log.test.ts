/**
 * The daemon's log of failed model requests (src/daemon/language-model.ts, docs/llm.md
 * "Failures"): one warn line per failure with kind, host, status and the adapter's message; the
 * key never; repeats of one kind within the window counted, not logged.
 */
import { describe, expect, it } from 'vitest';
import { llmFailureLog } from '../../src/daemon/language-model.js';

const KEY = 'sk-unit-Hh4kQ9wPz2Lx7Vb3';
const settings = { base_url: 'https://api.example.in:8443/v1', model: 'm', api_key: KEY, timeout_ms: 5000, max_retries: 2 };

function setup() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  let now = 1_000_000;
  const log = llmFailureLog({ warn: (fields, message) => lines.push({ fields, message }) }, settings, () => now);
  return { lines, log, advance: (ms: number) => (now += ms) };
}

describe('llmFailureLog', () => {
  it('logs kind, host, status, model and the message, with the key taken out', () => {
    const { lines, log } = setup();
    log({
      model: 'm',
      kind: 'refused',
      status: 401,
      message: `the model endpoint api.example.in:8443 refused the request with HTTP 401: bad key ${KEY}`,
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toEqual({ component: 'llm', kind: 'refused', host: 'api.example.in:8443', status: 401, model: 'm' });
    expect(lines[0]!.message).toContain('HTTP 401: bad key [redacted]');
    expect(lines[0]!.message).not.toContain(KEY);
  });

  it('counts repeats of one kind within a minute, logs other kinds, and names the count on the next line', () => {
    const { lines, log, advance } = setup();
    const timeout = { model: 'm', kind: 'timeout', status: null, message: 'the model step passed its deadline of 5000 ms' };
    log(timeout);
    for (let i = 0; i < 5; i++) {
      advance(1000);
      log(timeout);
    }
    log({ model: 'm', kind: 'network', status: null, message: 'cannot reach the model endpoint api.example.in:8443 (ECONNREFUSED)' });
    expect(lines.map((l) => l.fields.kind)).toEqual(['timeout', 'network']);
    advance(60_000);
    log(timeout);
    expect(lines).toHaveLength(3);
    expect(lines[2]!.fields).toMatchObject({ kind: 'timeout', suppressed: 5 });
    expect(lines[2]!.message).toContain('5 more timeout failures not logged');
  });
});

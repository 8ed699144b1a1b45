/**
 * The keypad offer is for phone calls only (docs/api-decisions.md, "Phone turns"): a turn
 * through `POST /v1/sessions/{id}/turn` is typed, and its body cannot claim to be a phone turn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { testSpeech } from '../support/speech.js';

let t: TestApp;
const clock = Date.parse('2026-11-21T10:00:00+05:30') / 1000;

beforeAll(async () => {
  t = await makeTestApp({}, { speech: testSpeech(), nowS: () => clock });
});
afterAll(async () => t.close());

async function turn(id: string, body: Record<string, unknown>): Promise<{ text: string }> {
  const res = await t.call('POST', `/v1/sessions/${id}/turn`, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { text: string };
}

describe('the keypad offer over the HTTP API', () => {
  it('a typed turn that fails the digits step re-prompts without the keypad, whatever the body says', async () => {
    const opened = await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' });
    expect(opened.statusCode, opened.body).toBe(201);
    const id = (opened.json() as { session_id: string }).session_id;
    for (const text of ['Priya Sharma', 'yes', 'tomorrow', 'yes', 'five in the evening', 'yes']) await turn(id, { text });
    const reply = await turn(id, {
      text: 'nine oh eight seven six five four three oh two one one zero',
      phone: true,
      stt_provider: 'pocketsphinx',
    });
    expect(reply.text).toBe('Sorry, I did not catch that. Could you say your ten-digit mobile number again, slowly?');
  });
});

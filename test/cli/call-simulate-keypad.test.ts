/**
 * A phone number by keypad, end to end: `vagent call simulate` against a real daemon with the
 * embedded recogniser (pocketsphinx). The caller's line is garbled (babble-like noise written
 * as a WAV), so the digits step is asked again and offers the keypad; the caller keys the
 * number (`--dtmf 9876543210#`) and it is captured. Then keys pressed while the question is
 * still playing (`--barge-in`): they stop it and are captured too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WaveFile } from 'wavefile';
import { cleanupAll, runCli, startEmbeddedDaemon, tempDir } from '../support/daemon.js';

/** The clinic booking's phone step (config/agents/ag_clinic_booking.yaml), then a free-text step. */
const AGENT = `
id: ag_keypad_check
name: Keypad check
direction: inbound
language: en-IN
timezone: Asia/Kolkata
opening:
  - text: "Namaste, this is Sunrise Clinic."
  - text: "What is your ten-digit mobile number?"
    requires_user_input: true
steps:
  - id: phone
    ask: "What is your ten-digit mobile number?"
    reprompt: "Could you say your ten-digit mobile number again, slowly?"
    capture: { slot: phone, type: digits, min_length: 10, max_length: 10 }
    confirm: digits
    max_attempts: 3
    fallback: "I'm sorry, I couldn't get the number. Our front desk will confirm your appointment."
  - id: reason
    ask: "Lastly, in a few words, what is the reason for the visit?"
    capture: { slot: visit_reason, type: text }
    optional: true
    max_attempts: 1
closing: "Your appointment request is noted. Goodbye!"
close_grace_ms: 0
`;
const KEYPAD = "Or type it on your phone's keypad and press hash.";

let env: Record<string, string>;
let garbled: string;

/**
 * Three seconds of babble-like noise at 16 kHz: seeded white noise, low-passed, its loudness
 * rising and falling about five times a second like syllables, so the line's voice detector
 * hears speech that no word fits.
 */
function babble(seconds: number): Int16Array {
  const rate = 16_000;
  let seed = 24;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const out = new Int16Array(seconds * rate);
  let low = 0;
  for (let i = 0; i < out.length; i++) {
    low += 0.25 * (random() * 2 - 1 - low);
    const envelope = Math.sin((Math.PI * 5 * i) / rate) ** 2;
    out[i] = Math.round(Math.max(-1, Math.min(1, low * 4 * envelope)) * 12_000);
  }
  return out;
}

beforeAll(async () => {
  ({ env } = await startEmbeddedDaemon());
  const dir = tempDir();
  const file = path.join(dir, 'ag_keypad_check.yaml');
  fs.writeFileSync(file, AGENT);
  const applied = await runCli(['agent', 'apply', '-f', file], { env, timeoutMs: 60_000 });
  if (applied.code !== 0) throw new Error(`agent apply failed: ${applied.stderr}`);
  garbled = path.join(dir, 'garbled.wav');
  const wav = new WaveFile();
  wav.fromScratch(1, 16_000, '16', babble(3));
  fs.writeFileSync(garbled, wav.toBuffer());
}, 90_000);
afterAll(cleanupAll, 30_000);

type Line = Record<string, unknown> & { event: string };

async function simulate(args: string[]): Promise<Line[]> {
  const res = await runCli(['call', 'simulate', 'ag_keypad_check', ...args, '--timeout-s', '60', '--json'], {
    env,
    timeoutMs: 90_000,
  });
  expect(res.code, res.stderr).toBe(0);
  return res.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
}

describe('a phone number by keypad on a simulated call', { timeout: 120_000 }, () => {
  it('a garbled line, then keys: the re-prompt offers the keypad and the keyed number is captured', async () => {
    const lines = await simulate(['--wav', garbled, '--dtmf', '9876543210#', '--say', 'yes', '--say', 'fever and cough']);
    const turns = lines.filter((l) => l.event === 'turn') as Array<
      Line & { user_text: string; reply_text: string; stt_provider: string | null }
    >;
    const keyed = turns.findIndex((t) => t.stt_provider === 'dtmf');
    const why = JSON.stringify(turns.map((t) => [t.stt_provider, t.user_text, t.reply_text]));
    expect(keyed, why).toBeGreaterThan(0);
    // What the garbled line got: a re-ask of the step that ends with the keypad offer (never a readback).
    const offer = turns.slice(0, keyed).filter((t) => t.reply_text.includes(KEYPAD));
    expect(offer, why).toHaveLength(1);
    expect(offer[0]!.reply_text, why).toMatch(/ten-digit mobile number.*Or type it on your phone's keypad and press hash\.$/);
    expect(
      turns.slice(0, keyed).some((t) => t.reply_text.includes('Is that correct?')),
      why,
    ).toBe(false);
    // The keys, read back digit by digit; "yes" confirms them.
    expect(turns[keyed]).toMatchObject({ user_text: '9876543210' });
    expect(turns[keyed]!.reply_text).toMatch(/^9 8 7 6 5 4 3 2 1 0 Is that correct\?$/);
    const summary = lines.at(-1)!;
    expect(summary.event).toBe('summary');
    expect(summary.extracted, why).toMatchObject({ phone: '9876543210' });
    expect(summary.status).toBe('ended');
  });

  it('keys pressed while the question is playing stop it and are captured', async () => {
    const lines = await simulate(['--barge-in', '--dtmf', '9876543210#', '--say', 'yes', '--say', 'fever and cough']);
    const summary = lines.at(-1)!;
    const keyTurn = (summary.turns as Array<Record<string, unknown>>).find((t) => t.kind === 'dtmf');
    // The opening was cleared soon after the first key, before it had finished.
    const clear = lines.find((l) => l.event === 'clear' && l.turn === keyTurn?.turn);
    expect(clear, JSON.stringify(lines.filter((l) => l.event !== 'dtmf' && l.event !== 'mark'))).toBeDefined();
    expect(clear!.barge_in_ms as number).toBeLessThan(1000);
    expect(clear!.dropped_ms as number).toBeGreaterThan(0);
    const turns = lines.filter((l) => l.event === 'turn');
    expect(turns[0]).toMatchObject({ user_text: '9876543210', stt_provider: 'dtmf' });
    expect(summary.extracted).toMatchObject({ phone: '9876543210' });

    // Its events (docs/events.md): the call's life, the keys, and one end with its reason.
    const sessionId = summary.session_id as string;
    const res = await fetch(`${env.VAGENT_URL}/v1/events?session_id=${sessionId}`, {
      headers: { authorization: `Bearer ${env.VAGENT_API_KEY}` },
    });
    const events = ((await res.json()) as { data: Array<{ type: string; sequence: number; data: Record<string, unknown> }> }).data;
    const types = events.map((e) => e.type);
    expect(types.slice(0, 3), JSON.stringify(types)).toEqual(['session.opened', 'call.created', 'call.answered']);
    expect(events.find((e) => e.type === 'call.dtmf')?.data).toEqual({ digits: '9876543210' });
    expect(types.filter((t) => t === 'call.ended')).toHaveLength(1);
    expect(types.at(-1)).toBe('call.ended');
    expect(events.at(-1)!.data.end_reason).toBe('completed_by_agent');
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
  });
});

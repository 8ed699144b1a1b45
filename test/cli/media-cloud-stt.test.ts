/**
 * Cloud speech recognition end to end (docs/media.md "Cloud speech recognition"): a real daemon set
 * to `recognizer: deepgram` with `recognizers: {hi: sarvam}`, the local fakes of Deepgram and
 * Sarvam (src/devtools, their exact WebSocket protocols) as the providers, and `vagent call
 * simulate` playing the carrier with synthesised caller lines at real-time pacing. The Hindi EMI
 * reminder's call is heard by Sarvam (transcripts in Devanagari and in Latin script reach the
 * extractors), the English one by Deepgram; each turn's `stt_provider` names who heard it and
 * `stt_inr` is priced by it. Then Sarvam refuses the key (403) and nothing else serves Hindi: the
 * caller is "not heard", re-asked, and the call ends politely — never silence — with the failure
 * logged and no key anywhere.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeDeepgram, type FakeDeepgram } from '../../src/devtools/fake-deepgram.js';
import { startFakeSarvam, type FakeSarvam } from '../../src/devtools/fake-sarvam.js';
import { priceMicro } from '../../src/domain/money.js';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, type Daemon } from '../support/daemon.js';

const CONTEXT = JSON.stringify({ emi_amount: '12,500', due_date: '25 November', loan_last4: '4321' });
/** What the Hindi caller is heard to say, step by step (config/agents/ag_emi_reminder_hi.yaml). */
const HINDI = ['हाँ जी, मैं बोल रहा हूँ', 'haan ji, kar dunga', 'परसों', 'haan', 'shaam 5 baje', 'हाँ'];
/** And the English one (config/agents/ag_emi_reminder.yaml). */
const ENGLISH = ['yes speaking', 'yes I will', 'tomorrow', 'yes', 'five pm', 'yes'];

/** A daemon and its admin key. */
interface Stack {
  daemon: Daemon;
  key: string;
}
/** Hears through the fakes below; `refusing`'s Sarvam refuses every key (a second fake, so both tests run at once). */
let main: Stack;
let refusing: Stack;
let dg: FakeDeepgram;
let sv: FakeSarvam;
let svRefusing: FakeSarvam;
let dgKey: string;
let svKey: string;

beforeAll(async () => {
  requireBuild();
  dgKey = `dg${crypto.randomBytes(10).toString('hex')}`;
  svKey = `sv${crypto.randomBytes(10).toString('hex')}`;
  [dg, sv, svRefusing] = await Promise.all([
    startFakeDeepgram({ apiKey: dgKey, script: ENGLISH }),
    startFakeSarvam({ apiKey: svKey, script: HINDI }),
    startFakeSarvam({ apiKey: svKey, script: [] }),
  ]);
  const stack = async (sarvamUrl: string): Promise<Stack> => {
    const daemon = await startDaemon({
      env: {
        VAGENT_RECOGNIZER: 'deepgram',
        VAGENT_RECOGNIZERS: 'hi=sarvam',
        DEEPGRAM_API_KEY: dgKey,
        VAGENT_DEEPGRAM_URL: dg.url,
        SARVAM_API_KEY: svKey,
        VAGENT_SARVAM_URL: sarvamUrl,
      },
    });
    return { daemon, key: await adminKey(daemon.stateDir) };
  };
  main = await stack(sv.url);
  refusing = await stack(svRefusing.url);
}, 90_000);
afterAll(async () => {
  await cleanupAll();
  await dg?.close();
  await sv?.close();
  await svRefusing?.close();
}, 30_000);

type Line = Record<string, unknown> & { event: string };

async function simulate(
  { daemon, key }: Stack,
  agent: string,
  says: readonly string[],
  outbound = true,
): Promise<{ code: number | null; lines: Line[]; stderr: string }> {
  const res = await runCli(
    [
      'call',
      'simulate',
      agent,
      ...(outbound ? ['--customer-name', 'Ravi Kumar', '--context', CONTEXT] : []),
      '--timeout-s',
      '170',
      ...says.flatMap((s) => ['--say', s]),
      '--json',
    ],
    { env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key }, timeoutMs: 200_000 },
  );
  const lines = res.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
  return { code: res.code, lines, stderr: res.stderr };
}

/** The session's spoken turns, with the per-minute price of who heard them. */
async function spokenTurns(sessionId: unknown): Promise<Array<Record<string, unknown>>> {
  const { daemon, key } = main;
  const detail = await api(daemon, 'GET', `/v1/sessions/${String(sessionId)}`, { key });
  expect(detail.status).toBe(200);
  return (detail.body.turns as Array<Record<string, unknown>>).filter(
    (t) => typeof t.stt_provider === 'string' && t.stt_provider !== 'dtmf',
  );
}

// The two tests run at once, each against its own daemon: their calls are real-time audio, waited on.
describe.concurrent('calls heard by cloud recognisers, chosen by the agent’s language', { timeout: 240_000 }, () => {
  it('the Hindi EMI reminder is heard by Sarvam in both scripts; the English one by Deepgram; costs by who heard', async ({ expect }) => {
    const [hi, en] = await Promise.all([
      simulate(
        main,
        'ag_emi_reminder_hi',
        HINDI.map((_, i) => `haan ji ${i}`),
      ),
      simulate(main, 'ag_emi_reminder', ENGLISH),
    ]);
    for (const [name, run] of [
      ['hi', hi],
      ['en', en],
    ] as const) {
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      expect(run.lines.at(-1)!.event, name).toBe('summary');
    }
    const hiSummary = hi.lines.at(-1)!;
    expect(hiSummary.status).toBe('ended');
    // Devanagari "हाँ" and Latin "haan ji" both answered yes; "परसों" is a date.
    expect(hiSummary.extracted).toMatchObject({ identity_confirmed: true, can_pay: true });
    expect((hiSummary.extracted as Record<string, unknown>).promise_date).toBeDefined();
    const heardHi = hi.lines.filter((l) => l.event === 'turn').map((l) => l.user_text);
    expect(heardHi).toEqual(expect.arrayContaining(['हाँ जी, मैं बोल रहा हूँ', 'haan ji, kar dunga', 'परसों']));
    // Sarvam sends no confidence: the turn records none, and the date it heard is read back before it is stored.
    const dateTurn = hi.lines.find((l) => l.event === 'turn' && l.user_text === 'परसों')!;
    expect(dateTurn.stt_confidence).toBeNull();
    expect(dateTurn.reply_text).toMatch(/^मैंने सुना: /);

    const hiTurns = await spokenTurns(hiSummary.session_id);
    expect(hiTurns.length).toBeGreaterThanOrEqual(4);
    for (const t of hiTurns) {
      expect(t.stt_provider).toBe('sarvam');
      expect((t.cost as { stt_inr: number }).stt_inr).toBe(priceMicro(t.stt_audio_ms as number, 0.5, 60_000) / 1e6);
    }
    expect(sv.connections.filter((c) => c.refused === undefined).length).toBeGreaterThanOrEqual(hiTurns.length);
    expect(sv.connections.every((c) => c.query['language-code'] === 'hi-IN')).toBe(true);

    const enSummary = en.lines.at(-1)!;
    expect(enSummary.extracted).toMatchObject({ can_pay: true });
    const enTurns = await spokenTurns(enSummary.session_id);
    expect(enTurns.length).toBeGreaterThanOrEqual(4);
    for (const t of enTurns) {
      expect(t.stt_provider).toBe('deepgram');
      expect((t.cost as { stt_inr: number }).stt_inr).toBe(priceMicro(t.stt_audio_ms as number, 0.37, 60_000) / 1e6);
    }
    expect(dg.connections.length).toBeGreaterThanOrEqual(enTurns.length);
  });

  it('a Sarvam that refuses the key, no embedded fallback for Hindi: not heard, re-asked, then a polite hang-up; logged without the key', async ({
    expect,
  }) => {
    // This daemon's Sarvam refuses every handshake (403), as for a revoked key. Hindi has no
    // embedded fallback (it hears English only), wherever pocketsphinx is installed or not.
    const { daemon, key } = refusing;
    svRefusing.rejectNext(403, 50);
    const agent = {
      id: 'ag_stt_refused',
      name: 'Refused STT',
      direction: 'inbound',
      language: 'hi-IN',
      opening: [{ text: 'नमस्ते।' }],
      steps: [{ id: 'ok', ask: 'क्या अभी बात कर सकते हैं?', capture: { slot: 'good_time', type: 'yes_no' } }],
      closing: 'धन्यवाद।',
      media: { no_speech_timeout_ms: 1500, max_silence_reprompts: 0 },
    };
    expect([200, 201]).toContain((await api(daemon, 'PUT', '/v1/agents/ag_stt_refused', { key, body: agent })).status);
    const run = await simulate(refusing, 'ag_stt_refused', ['haan ji'], false);
    expect(run.code, run.stderr).toBe(0);
    const summary = run.lines.at(-1)!;
    expect(summary.event).toBe('summary');
    expect(summary.status).toBe('ended');
    expect(summary.close).toMatchObject({ by: 'bot' });
    const detail = await api(daemon, 'GET', `/v1/sessions/${String(summary.session_id)}`, { key });
    const events = (detail.body.turns as Array<Record<string, unknown>>).map((t) => t.event ?? 'speech');
    expect(events).toContain('not_heard');
    expect(events.at(-1)).toBe('give_up');
    const out = daemon.stdout();
    expect(out).toMatch(/"msg":"speech recognition: sarvam failed and no fallback serves this language"/);
    expect(out).toMatch(/"primary_skipped":true/);
    for (const secret of [dgKey, svKey]) {
      expect(out.includes(secret)).toBe(false);
      expect(JSON.stringify(detail.body).includes(secret)).toBe(false);
    }
  });
});

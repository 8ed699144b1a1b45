/**
 * The embedded recogniser's confidence for grammar hypotheses (src/adapters/recognizers/pocketsphinx-score.ts):
 * the backtrace the engine logs, the per-frame ratio against the phone loop and its 0–1 mapping,
 * and, with the real engine on lines spoken by the embedded eSpeak voice, that a line the grammar
 * was built for scores clearly higher than other speech forced through it or noise.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { compileAgent, initialState } from '../../src/engine/state.js';
import { runTurn } from '../../src/engine/turn.js';
import { resample } from '../../src/media/audio-resample.js';
import { PocketsphinxRecognizer, pocketsphinxStatus } from '../../src/adapters/recognizers/pocketsphinx.js';
import { EngineLog, grammarConfidence, RATIO_MIDPOINT, speechRatio } from '../../src/adapters/recognizers/pocketsphinx-score.js';
import type { FinalTranscript, RecognitionGrammar, RecognizerError } from '../../src/media/recognizer.js';
import { synthesizeLines } from '../support/espeak-worker.js';

/** What pocketsphinx_continuous 0.8 logs for "yes" under the yes_no grammar with `-backtrace yes`. */
const GRAMMAR_LOG = `INFO: fsg_search.c(870): fsg 0.06 wall 0.018 xRT
INFO: pocketsphinx.c(1168): yes (-1645)
word                 start end   pprob ascr       lscr       lback
<sil>                0     5     1.000 -186       -337       1  
yes                  6     42    1.000 -626       0          1  
<sil>                43    87    1.000 -159       -337       1  
INFO: cmn_live.c(120): Update from < 29.29 -16.86 >
ERROR: "fsg_search.c", line 940: Final result does not match the grammar in frame 0
`;
/** The phone loop's log for the same audio. */
const LOOP_LOG = `INFO: pocketsphinx.c(1168): SIL IY SIL (-2434)
word                 start end   pprob ascr       lscr       lback
SIL                  0     5     1.000 -160       0          0  
IY                   6     20    1.000 -457       -236       0  
SIL                  21    87    1.000 -1159      -422       0  
INFO: allphone_search.c(907): Hyp: SIL IY SIL
`;

describe('EngineLog, speechRatio and grammarConfidence', () => {
  it('reads the best path from the backtrace, in chunks split anywhere, and keeps the error lines', () => {
    const log = new EngineLog();
    for (let i = 0; i < GRAMMAR_LOG.length; i += 7) log.feed(GRAMMAR_LOG.slice(i, i + 7));
    expect(log.bestPath).toEqual([
      { word: '<sil>', start: 0, end: 5, ascr: -186 },
      { word: 'yes', start: 6, end: 42, ascr: -626 },
      { word: '<sil>', start: 43, end: 87, ascr: -159 },
    ]);
    expect(log.errors).toEqual(['ERROR: "fsg_search.c", line 940: Final result does not match the grammar in frame 0']);
  });

  it("compares the two paths over the grammar's speech only, the loop pro rata", () => {
    const g = new EngineLog();
    g.feed(GRAMMAR_LOG);
    const l = new EngineLog();
    l.feed(LOOP_LOG);
    // frames 6–42: the grammar -626/37; the loop -457 (IY, 6–20) + 22/67 of SIL's -1159, over 37
    const want = -626 / 37 - (-457 + (-1159 * 22) / 67) / 37;
    expect(speechRatio(g.bestPath, l.bestPath)).toBeCloseTo(want, 6);
    expect(speechRatio([{ word: '<sil>', start: 0, end: 9, ascr: -50 }], l.bestPath)).toBeNaN();
  });

  it('maps the ratio to 0–1: one half at the midpoint, rising with it, 0 for no ratio', () => {
    expect(grammarConfidence(RATIO_MIDPOINT)).toBeCloseTo(0.5, 9);
    const xs = [-80, -40, -22, -10, 0, 10].map(grammarConfidence);
    for (let i = 1; i < xs.length; i++) expect(xs[i]!).toBeGreaterThan(xs[i - 1]!);
    expect(xs[0]!).toBeGreaterThanOrEqual(0);
    expect(xs.at(-1)!).toBeLessThanOrEqual(1);
    expect(grammarConfidence(NaN)).toBe(0);
  });
});

const available = pocketsphinxStatus().available;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Deterministic white noise (a linear congruential generator), `amplitude` of 32 767. */
function noise(samples: number, amplitude: number, seed = 7): Int16Array {
  const out = new Int16Array(samples);
  let x = seed;
  for (let i = 0; i < samples; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out[i] = Math.round(((x / 2147483648) * 2 - 1) * amplitude);
  }
  return out;
}

describe.runIf(available)('grammar confidence with the real engine', () => {
  const LINES = {
    yes: 'yes',
    tomorrow: 'tomorrow',
    weather: 'the weather is really nice today',
    book: 'I would like to book an appointment',
  } as const;
  const audio = {} as Record<keyof typeof LINES, Int16Array>;
  let rec: PocketsphinxRecognizer;

  beforeAll(async () => {
    const names = Object.keys(LINES) as Array<keyof typeof LINES>;
    const spoken = await synthesizeLines(
      'ps-confidence',
      names.map((n) => LINES[n]),
    );
    spoken.forEach((s, i) => (audio[names[i]!] = resample(s.samples, s.sampleRate, 16000)));
    rec = new PocketsphinxRecognizer({ maxProcesses: 8 });
  }, 60_000);

  afterAll(async () => {
    await rec?.close();
  });

  /** The final for `pcm` under `grammar`; the embedded recogniser always measures its confidence. */
  async function hear(pcm: Int16Array, grammar: RecognitionGrammar): Promise<FinalTranscript & { confidence: number }> {
    const stream = rec.start({ language: 'en-IN', sampleRateHz: 16000, hints: { grammar } });
    const done = new Promise<FinalTranscript & { confidence: number }>((resolve, reject) => {
      stream.on('final', (f) => (f.confidence === null ? reject(new Error('no confidence')) : resolve({ ...f, confidence: f.confidence })));
      stream.on('error', (e: RecognizerError) => reject(e));
    });
    for (let i = 0; i < pcm.length; i += 320) stream.push(pcm.subarray(i, i + 320));
    stream.finish();
    return done;
  }

  it('a line the grammar was built for scores clearly above other speech forced through it', async () => {
    const yes = await hear(audio.yes, 'yes_no');
    const tomorrow = await hear(audio.tomorrow, 'date');
    expect(yes.text).toBe('yes');
    expect(tomorrow.text).toBe('tomorrow');
    const wrong = [
      await hear(audio.weather, 'yes_no'),
      await hear(audio.weather, 'number'),
      await hear(audio.book, 'date'),
      await hear(audio.book, 'name'),
    ];
    for (const w of wrong) expect(w.text).not.toBe(''); // the grammar forced some words on it
    expect(Math.min(yes.confidence, tomorrow.confidence)).toBeGreaterThan(0.8);
    expect(Math.max(...wrong.map((w) => w.confidence))).toBeLessThan(0.3);
    // not one number for every turn
    expect(new Set([yes, tomorrow, ...wrong].map((f) => f.confidence)).size).toBe(6);
  }, 60_000);

  it('the same line buried in noise scores clearly lower than clean, at every level tried', async () => {
    const clean = await hear(audio.tomorrow, 'date');
    expect(clean.confidence).toBeGreaterThan(0.8);
    const noisy: number[] = [];
    for (const amplitude of [2000, 3000, 4000, 6000]) {
      const loud = noise(audio.tomorrow.length, amplitude);
      noisy.push(
        (
          await hear(
            audio.tomorrow.map((v, i) => Math.max(-32768, Math.min(32767, v + loud[i]!))),
            'date',
          )
        ).confidence,
      );
    }
    for (const c of noisy) expect(clean.confidence - c).toBeGreaterThan(0.4);
    // a level may happen to force a path that fits better than the rest (4000 of 32 767 did): three of four are low
    expect([...noisy].sort((a, b) => a - b)[2]).toBeLessThan(0.3);
  }, 60_000);

  it('the clinic agent stores a day heard clean, and asks about the same day heard through noise instead of storing it', async () => {
    const file = parse(fs.readFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), 'utf8')) as unknown;
    const parsed = parseAgentDefinition(file);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const agent = compileAgent(parsed.agent);
    const REF = Date.parse('2026-11-21T10:00:00+05:30');
    const vars = { context: {} };
    // typed answers bring the cursor to the day step
    let state = initialState(agent);
    for (const text of ['my name is Priya Sharma', 'yes']) state = runTurn(agent, state, { text, nowMs: REF, refMs: REF, vars }).state;
    expect(state.cursor).toBe('day');
    const dayTurn = async (pcm: Int16Array) => {
      const heard = await hear(pcm, 'date');
      return {
        heard,
        out: runTurn(agent, state, { text: heard.text, nowMs: REF, refMs: REF, vars, sttConfidence: heard.confidence }),
      };
    };

    const clean = await dayTurn(audio.tomorrow);
    expect(clean.out.state.slots.visit_date).toBe('2026-11-22'); // stored, then read back as the step asks
    expect(clean.out.clips[0]!.text).toMatch(/^That is /);

    const loud = noise(audio.tomorrow.length, 3000);
    const garbled = await dayTurn(audio.tomorrow.map((v, i) => Math.max(-32768, Math.min(32767, v + loud[i]!))));
    expect(garbled.heard.text).not.toBe('');
    expect(garbled.out.state.slots.visit_date).toBeUndefined();
    expect(garbled.out.clips.map((c) => c.text)).toEqual([expect.stringMatching(/^I heard .+\. Is that right\?$/)]);
    expect(garbled.out.trace).toContainEqual(
      expect.objectContaining({
        layer: 'confirm',
        detail: 'low_confidence',
        slot: 'visit_date',
        confidence: garbled.heard.confidence,
      }),
    );
  }, 60_000);
});

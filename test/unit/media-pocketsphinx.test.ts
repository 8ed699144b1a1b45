/**
 * The embedded recogniser with the real engine (Debian's pocketsphinx 0.8 + en-us model) on
 * caller lines spoken by the embedded eSpeak voice, resampled to 16 kHz: what each step grammar
 * hears, event order and stream times, crash / unavailable / cancel, concurrency, clean close,
 * and that the clinic agent's name, day and phone steps advance on what it heard.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { resample } from '../../src/media/audio-resample.js';
import { PocketsphinxRecognizer, pocketsphinxStatus } from '../../src/adapters/recognizers/pocketsphinx.js';
import { dictionaryFor, romanisedPhones } from '../../src/adapters/recognizers/pocketsphinx-grammars.js';
import type {
  FinalTranscript,
  PartialTranscript,
  RecognitionGrammar,
  RecognitionStream,
  RecognizerError,
} from '../../src/media/recognizer.js';
import { compileAgent, initialState } from '../../src/engine/state.js';
import { extractPersonName } from '../../src/engine/slots/person-name.js';
import { runTurn } from '../../src/engine/turn.js';
import { synthesizeLines } from '../support/espeak-worker.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const LINES = {
  name: 'My name is Priya Sharma',
  tomorrow: 'tomorrow',
  nextMonday: 'next Monday',
  yes: 'yes',
  no: 'no',
  phone: 'nine eight seven six five four three two one zero',
  vikram: 'Vikram Shah',
} as const;
type Line = keyof typeof LINES;

/** The caller lines as 16 kHz PCM (and "yes" also as 8 kHz, a telephone's rate). */
const audio = {} as Record<Line, Int16Array>;
let yes8k: Int16Array;
let rec: PocketsphinxRecognizer;

beforeAll(async () => {
  const names = Object.keys(LINES) as Line[];
  const spoken = await synthesizeLines(
    'pocketsphinx',
    names.map((n) => LINES[n]),
  );
  spoken.forEach((s, i) => (audio[names[i]!] = resample(s.samples, s.sampleRate, 16000)));
  const yes = spoken[names.indexOf('yes')]!;
  yes8k = resample(yes.samples, yes.sampleRate, 8000);
  rec = new PocketsphinxRecognizer({ maxProcesses: 12 });
}, 60_000);

afterAll(async () => {
  await rec?.close();
});

interface Heard {
  events: Array<['partial', PartialTranscript] | ['final', FinalTranscript] | ['error', RecognizerError]>;
  final?: FinalTranscript;
  error?: RecognizerError;
}

/** Listens to every event of `stream`; resolves at its final or error. */
function listen(stream: RecognitionStream): Promise<Heard> {
  const heard: Heard = { events: [] };
  return new Promise((resolve) => {
    stream.on('partial', (p) => heard.events.push(['partial', p]));
    stream.on('final', (f) => {
      heard.events.push(['final', f]);
      heard.final = f;
      resolve(heard);
    });
    stream.on('error', (e) => {
      heard.events.push(['error', e]);
      heard.error = e;
      resolve(heard);
    });
  });
}

/** Pushes `pcm` in 20 ms frames (as a carrier stream delivers it), then finishes; returns what was heard. */
async function recognise(pcm: Int16Array, grammar: RecognitionGrammar, sampleRateHz = 16000, r = rec): Promise<Heard> {
  const stream = r.start({ language: 'en-IN', sampleRateHz, hints: { grammar } });
  const done = listen(stream);
  const frame = sampleRateHz / 50;
  for (let i = 0; i < pcm.length; i += frame) stream.push(pcm.subarray(i, i + frame));
  stream.finish();
  return done;
}

const available = pocketsphinxStatus().available;

describe('pocketsphinxStatus', () => {
  it('finds the Debian engine and model without loading it', () => {
    const s = pocketsphinxStatus();
    expect(s).toMatchObject({
      available: true,
      binary: expect.stringContaining('pocketsphinx_continuous'),
      model: '/usr/share/pocketsphinx/model/en-us',
    });
    expect(s.version).toMatch(/^0\.8/);
  });

  it('says how to install when the binary or the model is missing', () => {
    const noBin = pocketsphinxStatus({ binary: 'no-such-pocketsphinx' });
    expect(noBin.available).toBe(false);
    expect(noBin.reason).toContain('apt-get install pocketsphinx pocketsphinx-en-us');
    const noModel = pocketsphinxStatus({ model: '/nonexistent/model' });
    expect(noModel.available).toBe(false);
    expect(noModel.reason).toMatch(/model is missing.*apt-get install pocketsphinx pocketsphinx-en-us/);
  });
});

describe('romanisedPhones', () => {
  it('reads Indian romanisation as ARPAbet', () => {
    expect(romanisedPhones('priya')).toBe('P R IH Y AA');
    expect(romanisedPhones('bhatt')).toBe('B AH T');
    expect(dictionaryFor(['sharma'], 'sharma SH AA R M AH\n', new Set(['sharma'])).split('\n')).toContain('sharma(6) SH AA M AA');
    expect(() => romanisedPhones('Priya')).toThrow(RangeError);
  });
});

describe.runIf(available)('PocketsphinxRecognizer with the real engine', () => {
  it('the digits grammar hears a ten-digit number exactly', async () => {
    const heard = await recognise(audio.phone, 'digits');
    expect(heard.final?.text).toBe('nine eight seven six five four three two one zero');
  }, 30_000);

  it('the yes_no grammar hears yes and no, also from 8 kHz telephone audio', async () => {
    expect((await recognise(audio.yes, 'yes_no')).final?.text).toBe('yes');
    expect((await recognise(audio.no, 'yes_no')).final?.text).toBe('no');
    expect(['yes', 'yeah']).toContain((await recognise(yes8k, 'yes_no', 8000)).final?.text); // both a yes to the yes_no extractor
  }, 30_000);

  it('the name grammar yields text the person_name extractor reads as the name said', async () => {
    const heard = await recognise(audio.name, 'name');
    expect(heard.final?.text).toBe('my name is priya sharma');
    expect(extractPersonName(heard.final!.text, 'answer')?.value).toBe('Priya Sharma');
    const vikram = await recognise(audio.vikram, 'name');
    expect(extractPersonName(vikram.final!.text, 'answer')?.value).toBe('Vikram Shah');
  }, 30_000);

  it('the date grammar hears tomorrow and next monday', async () => {
    expect((await recognise(audio.tomorrow, 'date')).final?.text).toBe('tomorrow');
    expect((await recognise(audio.nextMonday, 'date')).final?.text).toBe('next monday');
  }, 30_000);

  it('sends the final last, with stream times from the samples pushed and a confidence', async () => {
    const silence = new Int16Array(16000); // 1 s of pause between two parts: the engine ends a segment
    const pcm = new Int16Array(audio.yes.length + silence.length + audio.no.length);
    pcm.set(audio.yes);
    pcm.set(audio.no, audio.yes.length + silence.length);
    const heard = await recognise(pcm, 'yes_no');
    const kinds = heard.events.map(([k]) => k);
    expect(kinds.at(-1)).toBe('final');
    expect(kinds.slice(0, -1).every((k) => k === 'partial')).toBe(true);
    const ms = (pcm.length / 16000) * 1000;
    expect(heard.final).toMatchObject({ startMs: 0, endMs: ms, audioMs: ms });
    expect(heard.final!.confidence).toBeGreaterThan(0);
    expect(heard.final!.confidence).toBeLessThanOrEqual(1);
    for (const [k, p] of heard.events) if (k === 'partial') expect(p.endMs).toBeLessThanOrEqual(ms);
  }, 30_000);

  it('an empty stream gets an empty final with confidence 0', async () => {
    const heard = await recognise(new Int16Array(0), 'digits');
    expect(heard.final).toMatchObject({ text: '', confidence: 0, audioMs: 0 });
  }, 30_000);

  it('a killed engine process is one crashed error, and nothing after it', async () => {
    const r = new PocketsphinxRecognizer({ spares: 0, maxProcesses: 2 });
    try {
      const stream = r.start({ language: 'en', sampleRateHz: 16000, hints: { grammar: 'digits' } });
      const done = listen(stream);
      stream.push(audio.phone.subarray(0, 8000));
      expect(r.pids).toHaveLength(2); // the grammar's engine and the phone loop that scores it
      process.kill(r.pids[0]!, 'SIGKILL');
      const heard = await done;
      expect(heard.error?.kind).toBe('crashed');
      expect(heard.error?.message).toMatch(/killed \(SIGKILL\)/);
      expect(stream.state).toBe('failed');
      stream.push(audio.phone.subarray(8000)); // audio in flight is ignored
      stream.finish();
      await new Promise((res) => setTimeout(res, 100));
      expect(heard.events).toHaveLength(1);
    } finally {
      await r.close();
    }
  }, 30_000);

  it('a missing binary makes every stream fail unavailable with the install hint', async () => {
    const r = new PocketsphinxRecognizer({ binary: '/nonexistent/pocketsphinx_continuous' });
    try {
      const heard = await recognise(audio.yes, 'yes_no', 16000, r);
      expect(heard.error?.kind).toBe('unavailable');
      expect(heard.error?.message).toContain('apt-get install pocketsphinx pocketsphinx-en-us');
      expect(r.processCount).toBe(0);
    } finally {
      await r.close();
    }
  });

  it('is silent after cancel, and its engine process is gone', async () => {
    const r = new PocketsphinxRecognizer({ spares: 0 });
    try {
      const stream = r.start({ language: 'en', sampleRateHz: 16000, hints: { grammar: 'yes_no' } });
      const events: string[] = [];
      stream.on('partial', () => events.push('partial'));
      stream.on('final', () => events.push('final'));
      stream.on('error', () => events.push('error'));
      stream.push(audio.yes);
      stream.finish();
      stream.cancel();
      await new Promise((res) => setTimeout(res, 1500));
      expect(events).toEqual([]);
      expect(stream.state).toBe('cancelled');
      expect(r.processCount).toBe(0);
    } finally {
      await r.close();
    }
  }, 30_000);

  it('five concurrent streams each get their own answer', async () => {
    const jobs: Array<[Int16Array, RecognitionGrammar, string]> = [
      [audio.phone, 'digits', 'nine eight seven six five four three two one zero'],
      [audio.yes, 'yes_no', 'yes'],
      [audio.no, 'yes_no', 'no'],
      [audio.tomorrow, 'date', 'tomorrow'],
      [audio.nextMonday, 'date', 'next monday'],
    ];
    const results = await Promise.all(jobs.map(([pcm, g]) => recognise(pcm, g)));
    expect(results.map((h) => h.final?.text)).toEqual(jobs.map(([, , want]) => want));
  }, 60_000);

  it('bounds its processes and leaves none behind after close()', async () => {
    const r = new PocketsphinxRecognizer({ maxProcesses: 2, spares: 1 });
    r.prewarm(['digits', 'yes_no', 'date']);
    expect(r.processCount).toBe(2);
    const a = r.start({ language: 'en', sampleRateHz: 16000, hints: { grammar: 'digits' } });
    const b = r.start({ language: 'en', sampleRateHz: 16000, hints: { grammar: 'yes_no' } });
    const c = listen(r.start({ language: 'en', sampleRateHz: 16000, hints: { grammar: 'date' } }));
    expect((await c).error?.kind).toBe('unavailable');
    expect(r.processCount).toBeLessThanOrEqual(2);
    const pids = r.pids;
    a.push(audio.yes);
    b.push(audio.yes);
    await r.close();
    expect(r.processCount).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(); // gone and reaped
    expect(() => r.start({ language: 'en', sampleRateHz: 16000 })).not.toThrow();
  }, 30_000);

  it.each([
    ['after they have loaded', 1500],
    // still loading their model: no engine has opened its FIFO yet, and with no writer left it
    // would block in open() for ever (setpriv's parent-death signal ends it)
    ['at once, while they still load', 0],
  ])(
    "engines do not outlive their worker's process (the built module in dist/, killed with SIGKILL %s)",
    async (_when, waitMs) => {
      const dist = path.join(ROOT, 'dist', 'adapters', 'recognizers', 'pocketsphinx.js');
      expect(fs.existsSync(dist), 'build dist/ first (npx tsc -p tsconfig.build.json)').toBe(true);
      const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-ps-orphans-'));
      const script = `const { PocketsphinxRecognizer } = await import(${JSON.stringify(dist)});
      const r = new PocketsphinxRecognizer({ spares: 2, workDir: ${JSON.stringify(workDir)} });
      r.prewarm(['digits', 'yes_no']);
      const s = r.start({ language: 'en', sampleRateHz: 16000, hints: { grammar: 'date' } });
      s.push(new Int16Array(1600));
      console.log(JSON.stringify(r.pids));
      setInterval(() => {}, 1000);`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const pids = await new Promise<number[]>((resolve) =>
        child.stdout.once('data', (d: Buffer) => resolve(JSON.parse(d.toString()) as number[])),
      );
      // two warm spares each of digits, yes_no and the phone loop, and the date stream's engine (its loop took a spare)
      expect(pids.length).toBe(7);
      await new Promise((res) => setTimeout(res, waitMs)); // the engines load and wait for audio
      child.kill('SIGKILL');
      const alive = (pid: number): boolean => {
        try {
          // a zombie (state Z) has exited; its parent, gone, no longer waits for it
          return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 100 && pids.some(alive); i++) await new Promise((res) => setTimeout(res, 100));
      const left = pids.filter(alive);
      for (const pid of left) process.kill(pid, 'SIGKILL');
      fs.rmSync(workDir, { recursive: true, force: true });
      expect(left).toEqual([]);
    },
    30_000,
  );

  it('rejects malformed options and other languages', () => {
    expect(() => rec.start({ language: 'hi-IN', sampleRateHz: 16000 })).toThrow(RangeError);
    expect(() => rec.start({ language: 'en', sampleRateHz: 100 })).toThrow(RangeError);
  });

  it('the clinic agent advances through its name, day and phone steps on what it heard', async () => {
    const file = parse(fs.readFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), 'utf8')) as unknown;
    const parsed = parseAgentDefinition(file);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const agent = compileAgent(parsed.agent);
    const REF = Date.parse('2026-11-21T10:00:00+05:30');
    let state = initialState(agent);
    const say = async (pcm: Int16Array, grammar: RecognitionGrammar): Promise<void> => {
      const heard = await recognise(pcm, grammar);
      state = runTurn(agent, state, { text: heard.final!.text, nowMs: REF, refMs: REF, vars: { context: {} } }).state;
    };
    expect(state.cursor).toBe('name');
    await say(audio.name, 'name');
    await say(audio.yes, 'yes_no');
    expect(state.cursor).toBe('day');
    expect(state.slots.patient_name).toBe('Priya Sharma');
    await say(audio.tomorrow, 'date');
    await say(audio.yes, 'yes_no');
    expect(state.cursor).toBe('time');
    expect(state.slots.visit_date).toBe('2026-11-22');
    // the time step is not part of this check: move the cursor on to the phone step
    state = runTurn(agent, state, { text: 'five pm', nowMs: REF, refMs: REF, vars: { context: {} } }).state;
    state = runTurn(agent, state, { text: 'yes', nowMs: REF, refMs: REF, vars: { context: {} } }).state;
    expect(state.cursor).toBe('phone');
    await say(audio.phone, 'digits');
    await say(audio.yes, 'yes_no');
    expect(state.slots.phone).toBe('9876543210');
    expect(state.cursor).toBe('reason');
  }, 60_000);
});

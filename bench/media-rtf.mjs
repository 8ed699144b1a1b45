/**
 * `npm run build && node bench/media-rtf.mjs`: the embedded recogniser's real-time factor
 * (src/adapters/recognizers/pocketsphinx.ts: Debian's pocketsphinx 0.8, en-us model) on this machine.
 *
 * Speech: ten caller lines per step grammar, spoken by the embedded synthesiser (eSpeak NG,
 * 48 kHz) and resampled to 16 kHz. Each utterance is pushed in 20 ms chunks as fast as the
 * stream takes them, then finished; one utterance at a time.
 *
 * Reports, per grammar:
 *   audio   mean utterance length, s
 *   cold    real-time factor of the first utterance on a new recogniser with no warm process:
 *           (first push → final) ÷ audio length; includes starting the engine and loading the
 *           model, grammar and dictionary
 *   warm    the same for the other nine, each taking a warm process (the recogniser keeps one
 *           per grammar, started in the background after each take; the bench waits 0.5 s
 *           between utterances so the next one is loaded, as a caller's reply gap allows):
 *           median and worst
 *   final   finish() → final, ms, warm: median and worst (the engine catching up on buffered
 *           audio plus its end-of-utterance passes)
 *   live    finish() → final, ms, for one utterance pushed at real-time pacing (20 ms chunks
 *           every 20 ms), the way a call delivers it: the latency a caller waits on
 *   wer     word error rate against the words said, % (numbers as the grammar writes them)
 *   wer 8k  the same for the ten lines resampled to 8 kHz first (a telephone's band), pushed at 8 kHz
 * Exits 1 when pocketsphinx or the embedded synthesiser is not installed. BENCH_SMOKE=1
 * (bench/smoke.mjs): two grammars of two lines each, shorter pauses.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { resample } from '../dist/media/audio-resample.js';
import { PocketsphinxRecognizer, pocketsphinxStatus } from '../dist/adapters/recognizers/pocketsphinx.js';
import { EspeakSynthesizer } from '../dist/adapters/speech/espeak.js';
import { SMOKE, smokeOr } from './lib/report.mjs';

const ALL_LINES = {
  digits: [
    'nine eight seven six five four three two one zero',
    'four five six',
    'one two three four',
    'seven seven zero one',
    'eight oh five two six',
    'two four six eight',
    'nine one one',
    'three three five five',
    'six oh two one nine eight',
    'five five five',
  ],
  yes_no: ['yes', 'no', 'yeah', 'yes please', 'no thanks', 'correct', 'nope', 'sure', 'that is right', 'not really'],
  name: [
    'My name is Priya Sharma',
    'This is Rahul Gupta',
    'Vikram Shah',
    'My name is Anjali Rao',
    'I am Sunita Patel',
    'Amit Kumar',
    'My name is Neha Joshi',
    'Deepak Verma',
    'This is Kavita Iyer',
    'My name is Arjun Reddy',
  ],
  date: [
    'tomorrow',
    'today',
    'next Monday',
    'on Friday',
    'the fourteenth',
    'day after tomorrow',
    'this Saturday',
    'the first of December',
    'November twentieth',
    'next Wednesday',
  ],
  time: [
    'five p m',
    'ten thirty in the morning',
    'half past four',
    'quarter to six',
    'noon',
    'four in the evening',
    'eleven a m',
    "nine o'clock",
    'three fifteen p m',
    'at seven p m',
  ],
  number: [
    'twenty five',
    'three hundred',
    'one thousand two hundred',
    'seventeen',
    'ninety nine',
    'five hundred and ten',
    'forty',
    'two thousand',
    'sixty three',
    'eight',
  ],
  free: [
    'I would like to book an appointment',
    'what time do you open',
    'how much is the consultation fee',
    'where is the clinic',
    'I have a fever and a cough',
    'can I come in the evening',
    'thank you very much',
    'I need to see a doctor',
    'is the doctor available today',
    'please call me back',
  ],
};
/** The lines recognised: two grammars of two lines each in the smoke mode. */
const LINES = SMOKE ? Object.fromEntries(['yes_no', 'digits'].map((g) => [g, ALL_LINES[g].slice(0, 2)])) : ALL_LINES;
/** Pauses: for a grammar's warm process to start, and between utterances (ms). */
const PREWARM_MS = smokeOr(300, 1000);
const GAP_MS = smokeOr(100, 500);
const GAP_8K_MS = smokeOr(100, 300);

const status = pocketsphinxStatus();
if (!status.available) {
  // The smoke (bench/smoke.mjs) runs where the recogniser may not be installed: nothing to run then.
  if (SMOKE) {
    console.log(`bench/media-rtf: skipped: ${status.reason}`);
    process.exit(0);
  }
  console.error(`bench/media-rtf: ${status.reason}`);
  process.exit(1);
}
if (!(await EspeakSynthesizer.available())) {
  console.error(
    'bench/media-rtf: the embedded synthesiser is not installed (optional dependency @echogarden/espeak-ng-emscripten), or dist/ is not built',
  );
  process.exit(1);
}

const synth = new EspeakSynthesizer();
const speech = {};
const speech8k = {};
for (const [grammar, lines] of Object.entries(LINES)) {
  speech[grammar] = [];
  speech8k[grammar] = [];
  for (const line of lines) {
    const a = await synth.synthesize(line, 'en');
    speech[grammar].push(resample(a.samples, a.sampleRate, 16000));
    speech8k[grammar].push(resample(a.samples, a.sampleRate, 8000));
  }
}
await synth.close();

const words = (s) =>
  s
    .toLowerCase()
    .replace(/[^a-z' ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
/** Word-level edit distance. */
function edits(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++)
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  }
  return d[a.length][b.length];
}

/** Recognises `pcm`; returns the text, first push → final and finish → final, ms. */
async function recognise(rec, pcm, grammar, paced, rate = 16000) {
  const stream = rec.start({ language: 'en-IN', sampleRateHz: rate, hints: { grammar } });
  const chunk = rate / 50;
  const result = new Promise((resolve, reject) => {
    stream.on('final', (f) => resolve(f));
    stream.on('error', (e) => reject(e));
  });
  const t0 = performance.now();
  for (let i = 0; i < pcm.length; i += chunk) {
    stream.push(pcm.subarray(i, i + chunk));
    if (paced) await sleep(20);
  }
  const t1 = performance.now();
  stream.finish();
  const final = await result;
  const t2 = performance.now();
  return { text: final.text, totalMs: t2 - t0, finalMs: t2 - t1 };
}

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const rows = [];
for (const grammar of Object.keys(LINES)) {
  const clips = speech[grammar];
  const secs = clips.map((c) => c.length / 16000);
  let errors = 0;
  let said = 0;
  const score = (i, text) => {
    const want = words(LINES[grammar][i]);
    errors += edits(want, words(text));
    said += want.length;
  };
  // cold: a new recogniser, no warm process
  const cold = new PocketsphinxRecognizer({ spares: 0 });
  const c = await recognise(cold, clips[0], grammar, false);
  await cold.close();
  score(0, c.text);
  // warm
  const rec = new PocketsphinxRecognizer({ spares: 1 });
  rec.prewarm([grammar]);
  await sleep(PREWARM_MS);
  const rtf = [];
  const fin = [];
  for (let i = 1; i < clips.length; i++) {
    const r = await recognise(rec, clips[i], grammar, false);
    rtf.push(r.totalMs / 1000 / secs[i]);
    fin.push(r.finalMs);
    score(i, r.text);
    await sleep(GAP_MS);
  }
  const live = await recognise(rec, clips[0], grammar, true);
  let errors8k = 0;
  for (let i = 0; i < clips.length; i++) {
    const r = await recognise(rec, speech8k[grammar][i], grammar, false, 8000);
    errors8k += edits(words(LINES[grammar][i]), words(r.text));
    await sleep(GAP_8K_MS);
  }
  await rec.close();
  rows.push({
    grammar,
    audio: (secs.reduce((a, b) => a + b, 0) / secs.length).toFixed(2),
    cold: (c.totalMs / 1000 / secs[0]).toFixed(3),
    warm: `${quantile(rtf, 0.5).toFixed(3)} / ${Math.max(...rtf).toFixed(3)}`,
    final: `${quantile(fin, 0.5).toFixed(0)} / ${Math.max(...fin).toFixed(0)}`,
    live: live.finalMs.toFixed(0),
    wer: ((100 * errors) / said).toFixed(1),
    wer8k: ((100 * errors8k) / said).toFixed(1),
  });
}

const head = ['grammar', 'audio s', 'cold RTF', 'warm RTF p50/max', 'finish→final ms p50/max', 'live ms', 'WER %', 'WER 8k %'];
const table = rows.map((r) => [r.grammar, r.audio, r.cold, r.warm, r.final, r.live, r.wer, r.wer8k]);
const width = head.map((h, i) => Math.max(h.length, ...table.map((t) => String(t[i]).length)));
const line = (cells) => cells.map((c, i) => String(c).padEnd(width[i])).join('  ');
console.log(
  `pocketsphinx ${status.version ?? ''} (${status.binary}), 16 kHz eSpeak speech, one utterance at a time; load average ${os.loadavg()[0].toFixed(2)} on ${os.availableParallelism()} cores`,
);
console.log(line(head));
for (const t of table) console.log(line(t));

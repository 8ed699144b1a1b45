/**
 * `npm run build && node bench/vad.mjs`: the cost and accuracy of the call media's voice
 * activity detector (src/media/vad.ts: WebRTC VAD, libfvad in WebAssembly), on this machine.
 *
 * Speech: four caller lines from the embedded synthesiser (eSpeak NG, 48 kHz, resampled), each
 * cut to its audible part and laid out with 0.7–1.3 s of digital silence around them; the
 * truth is where each line lies. Noise: deterministic white noise at 20, 10 and 5 dB SNR
 * (relative to the speech's RMS level).
 *
 * Reports, per sample rate (8000 and 16000 Hz) and frame length (10, 20, 30 ms), mode 2:
 *   cpu    µs of one core per second of audio per stream, measured with 100 detectors fed in
 *          turn in 20 ms chunks (a carrier's packet), best of 3 rounds; and that as % of a core
 *   agree  per-frame agreement with the truth (frame centre inside a line = speech), %
 *   miss   share of speech frames reported as silence, %;  false  share of silence frames
 *          reported as speech, % (the detector's own ~90 ms hangover after each line counts
 *          here as false speech)
 * Exits 1 when the embedded synthesiser is not installed. BENCH_SMOKE=1 (bench/smoke.mjs): 5
 * streams, one round, 20 ms frames only.
 */
import { performance } from 'node:perf_hooks';
import { WebRtcVad } from '../dist/media/vad-webrtc.js';
import { EspeakSynthesizer } from '../dist/adapters/speech/espeak.js';
import { resampleMono16 } from '../dist/media/wav.js';
import { smokeOr } from './lib/report.mjs';

const LINES = ['My name is Priya Sharma.', 'Tomorrow at five pm.', 'Nine eight four five zero, one two three.', 'Yes please.'];
const GAPS_MS = [700, 900, 1100, 1300, 1000];
const STREAMS = smokeOr(5, 100);
/** Rounds of the CPU measurement (the best is kept), and the frame lengths tried. */
const ROUNDS = smokeOr(1, 3);
const FRAME_LENGTHS_MS = smokeOr([20], [10, 20, 30]);

if (!(await EspeakSynthesizer.available())) {
  console.error(
    'bench/vad: the embedded synthesiser is not installed (optional dependency @echogarden/espeak-ng-emscripten), or dist/ is not built',
  );
  process.exit(1);
}
const synth = new EspeakSynthesizer();
const clips48k = [];
for (const line of LINES) clips48k.push((await synth.synthesize(line, 'en')).samples);
await synth.close();

/** RMS level of samples. */
function rms(s) {
  let sum = 0;
  for (const v of s) sum += v * v;
  return Math.sqrt(sum / Math.max(1, s.length));
}
/** The clip cut to its audible 10 ms windows (RMS > 100). */
function trim(clip, rate) {
  const win = rate / 100;
  const n = Math.floor(clip.length / win);
  const loud = (w) => rms(clip.subarray(w * win, (w + 1) * win)) > 100;
  let a = 0;
  while (a < n && !loud(a)) a++;
  let b = n - 1;
  while (b > a && !loud(b)) b--;
  return clip.slice(a * win, (b + 1) * win);
}
/** The lines laid out with silence; their positions, ms; the speech RMS. */
function conversation(rate) {
  const clips = clips48k.map((c) => trim(resampleMono16(c, 48000, rate), rate));
  const total = clips.reduce((n, c) => n + c.length, 0) + GAPS_MS.reduce((n, g) => n + (g * rate) / 1000, 0);
  const pcm = new Int16Array(total);
  const speech = [];
  let at = (GAPS_MS[0] * rate) / 1000;
  clips.forEach((c, i) => {
    pcm.set(c, at);
    speech.push([(at * 1000) / rate, ((at + c.length) * 1000) / rate]);
    at += c.length + (GAPS_MS[i + 1] * rate) / 1000;
  });
  let sum = 0;
  let n = 0;
  for (const c of clips)
    for (const v of c) {
      sum += v * v;
      n++;
    }
  return { pcm, speech, speechRms: Math.sqrt(sum / n) };
}
/** Deterministic white noise of `level` RMS added to `pcm`. */
function withNoise(pcm, level) {
  let s = 7;
  const u = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) + 1) / 4294967297;
  return Int16Array.from(pcm, (v) =>
    Math.max(-32768, Math.min(32767, Math.round(v + level * Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u())))),
  );
}

const vad = await WebRtcVad.load();
const rows = [];
for (const rate of [8000, 16000]) {
  const c = conversation(rate);
  const seconds = c.pcm.length / rate;
  const chunk = rate / 50;
  for (const frameMs of FRAME_LENGTHS_MS) {
    // CPU: STREAMS detectors, each fed the whole conversation (20 dB SNR) chunk by chunk, in turn.
    const noisy = withNoise(c.pcm, c.speechRms / 10);
    let best = Infinity;
    for (let round = 0; round < ROUNDS; round++) {
      const detectors = Array.from({ length: STREAMS }, () => vad.createDetector({ sampleRate: rate, frameMs }));
      const t0 = performance.now();
      for (let at = 0; at < noisy.length; at += chunk) {
        const piece = noisy.subarray(at, at + chunk);
        for (const d of detectors) d.push(piece);
      }
      best = Math.min(best, performance.now() - t0);
      for (const d of detectors) d.close();
    }
    const usPerSecond = (best * 1000) / STREAMS / seconds;
    for (const snrDb of [null, 20, 10, 5]) {
      const pcm = snrDb === null ? c.pcm : withNoise(c.pcm, c.speechRms / 10 ** (snrDb / 20));
      const d = vad.createDetector({ sampleRate: rate, frameMs });
      const frames = d.push(pcm);
      d.close();
      let agree = 0,
        speech = 0,
        miss = 0,
        silence = 0,
        falseSpeech = 0;
      for (const f of frames) {
        const mid = f.startMs + f.durationMs / 2;
        const truth = c.speech.some(([a, b]) => mid >= a && mid < b);
        if (truth === f.speech) agree++;
        if (truth) {
          speech++;
          if (!f.speech) miss++;
        } else {
          silence++;
          if (f.speech) falseSpeech++;
        }
      }
      rows.push({
        rate,
        frameMs,
        snr: snrDb === null ? 'clean' : `${snrDb} dB`,
        'cpu µs/s': Math.round(usPerSecond),
        '% core': +(usPerSecond / 1e4).toFixed(3),
        'agree %': +((agree / frames.length) * 100).toFixed(1),
        'miss %': +((miss / speech) * 100).toFixed(1),
        'false %': +((falseSpeech / silence) * 100).toFixed(1),
      });
    }
  }
}
console.log(`bench/vad: WebRTC VAD (mode 2), ${STREAMS} streams for CPU; Node ${process.version}`);
console.table(rows);

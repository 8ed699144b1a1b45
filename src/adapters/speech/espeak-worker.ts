/**
 * Child-process side of the embedded eSpeak NG synthesiser (docs/architecture.md "Speech and the
 * audio cache": the GPL-3.0 engine kept in a child process behind the `SpeechSynthesizer`
 * interface). Started by ./espeak.ts with
 * `child_process.fork` of the compiled file (`dist/adapters/speech/espeak-worker.js`); talks over the
 * IPC channel with the messages of ./espeak-protocol.ts.
 *
 * Loads `@echogarden/espeak-ng-emscripten` (an Emscripten build of eSpeak NG, 22050 Hz PCM16),
 * answers one request at a time (synthesis is synchronous inside the module) with audio
 * resampled to 48 kHz, and exits when
 * the parent disconnects or dies, so it never outlives the daemon.
 */

import { ESPEAK_PACKAGE, type WorkerReply, type WorkerRequest } from './espeak-protocol.js';
import { CLIP_SAMPLE_RATE, joinSamples, resampleMono16 } from '../../media/wav.js';

/** The parts of the Emscripten module's `eSpeakNGWorker` this file uses. */
interface EspeakInstance {
  set_voice(name: string): number;
  get_samplerate(): number;
  synthesize(text: string, callback: (samples: Int16Array, events: unknown[]) => boolean | number): void;
}

/** eSpeak reads its input as SSML: plain text must have its markup characters escaped. */
function escapeMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function send(message: WorkerReply): void {
  process.send?.(message);
}

/** Loads the engine; null (after telling the parent why) when the package is not installed. */
async function load(): Promise<EspeakInstance | null> {
  try {
    const pkg: string = ESPEAK_PACKAGE; // a variable: the package is optional and untyped
    const mod = (await import(pkg)) as { default: () => Promise<{ eSpeakNGWorker: new () => EspeakInstance }> };
    const module = await mod.default();
    return new module.eSpeakNGWorker();
  } catch (err) {
    send({ type: 'fatal', reason: 'unavailable', message: `cannot load ${ESPEAK_PACKAGE}: ${(err as Error).message}` });
    return null;
  }
}

/** Synthesises one request; a refused voice is an 'error' reply, not a crash. */
function handle(engine: EspeakInstance, req: WorkerRequest, state: { voice: string | null }): void {
  if (state.voice !== req.voice) {
    const code = engine.set_voice(req.voice);
    if (code !== 0) {
      state.voice = null;
      send({
        type: 'error',
        id: req.id,
        reason: 'failed',
        message: `eSpeak NG has no voice ${JSON.stringify(req.voice)} (code ${code})`,
      });
      return;
    }
    state.voice = req.voice;
  }
  const chunks: Int16Array[] = [];
  engine.synthesize(escapeMarkup(req.text), (samples) => {
    if (samples && samples.length > 0) chunks.push(samples);
    return false; // true would abort the synthesis
  });
  const out = joinSamples(chunks);
  // Resampled here, so the parent's event loop never spends time on it.
  send({
    type: 'result',
    id: req.id,
    samples: resampleMono16(out, engine.get_samplerate(), CLIP_SAMPLE_RATE),
    sampleRate: CLIP_SAMPLE_RATE,
  });
}

async function main(): Promise<void> {
  if (!process.send) {
    process.stderr.write('espeak-worker: run me with child_process.fork (IPC channel required)\n');
    process.exit(2);
  }
  process.on('disconnect', () => process.exit(0));
  const engine = await load();
  if (!engine) {
    process.disconnect();
    return;
  }
  const state = { voice: null as string | null };
  process.on('message', (msg: WorkerRequest) => {
    if (msg?.type !== 'synthesize') return;
    try {
      handle(engine, msg, state);
    } catch (err) {
      state.voice = null;
      send({ type: 'error', id: msg.id, reason: 'failed', message: `eSpeak NG failed: ${(err as Error).message}` });
    }
  });
  send({ type: 'ready' });
}

void main();

/**
 * The embedded speech engine, parent side (docs/architecture.md "Speech and the audio cache":
 * eSpeak NG, GPL-3.0, runs in a child process behind the SpeechSynthesizer interface, so a
 * synthesis stall never blocks the event loop). The engine itself lives in ./espeak-worker.ts, started lazily with
 * `child_process.fork`; requests go over IPC one at a time, in call order.
 *
 * Failure handling: a call that outlives its time limit rejects with 'timeout' (and if it was
 * being synthesised, the child is killed); a child that dies rejects the call it was serving
 * with 'crashed'; either way the next call starts a fresh child. The child is unref'd, so a
 * forgotten `close()` never keeps the process alive, and it exits when its parent goes away.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESPEAK_PACKAGE, type WorkerReply, type WorkerRequest } from './espeak-protocol.js';
import {
  DEFAULT_SYNTHESIS_TIMEOUT_MS,
  SpeechError,
  type SpeechSynthesizer,
  type SynthesizedAudio,
  type SynthesizeOptions,
} from './types.js';

/**
 * Language names the bundled eSpeak NG data (package version 0.3.5) answers to in `set_voice`.
 * Indian languages: as, bn, gu, hi, kn, kok, ml, mr, ne, or, pa, sd, si, ta, te, ur.
 */
const ESPEAK_LANGUAGES = new Set(
  `af am an ar as az ba be bg bn bpy bs ca ca-ba ca-nw ca-va cmn cs cv cy da de el en
en-029 en-gb en-gb-scotland en-gb-x-gbclan en-gb-x-gbcwmd en-gb-x-rp en-us en-us-nyc eo es es-419 es-mx et eu fa fi fo fr
fr-be fr-ch fr-fr ga gd gn grc gu hak haw he hi hr ht hu hy hyw ia id io is it ja jbo ka kk kl kn ko kok ku ky la lb lfn
lt ltg lv mi mk ml mr ms mt my nb ne nl no om or pa pap pl pt pt-br pt-pt py qu ro ru sd shn si sk sl smj sq sr sv sw ta
te th ti tk tn tr tt ug uk ur uz vi yue zh`.split(/\s+/),
);

/** Tags whose closest eSpeak voice is not found by their own name. */
const VOICE_ALIASES: Readonly<Record<string, string>> = {
  'en-in': 'en', // no Indian-English voice in this eSpeak build; 'en' is British English
  'zh-cn': 'cmn',
  'zh-hk': 'yue',
};

/** Time allowed for a child to load the engine before it is killed, ms. */
const STARTUP_TIMEOUT_MS = 15_000;

/** Options of {@link EspeakSynthesizer}. */
export interface EspeakOptions {
  /** The compiled worker script; default {@link espeakWorkerPath}(). */
  workerPath?: string;
}

/**
 * Where the compiled worker is: beside this file when running from `dist/`; when running from
 * sources (vitest), the build output `dist/adapters/speech/espeak-worker.js` of the same checkout.
 */
export function espeakWorkerPath(): string {
  const here = fileURLToPath(import.meta.url);
  const dir = path.dirname(here);
  if (here.endsWith('.js')) return path.join(dir, 'espeak-worker.js');
  return path.resolve(dir, '..', '..', '..', 'dist', 'adapters', 'speech', 'espeak-worker.js');
}

/** eSpeak NG's voice for a BCP-47 tag ('en-IN' → 'en', 'hi-IN' → 'hi', 'en-US' → 'en-us'). */
export function espeakVoiceFor(language: string): string {
  const tag = language.trim().toLowerCase().replace(/_/g, '-');
  const alias = VOICE_ALIASES[tag];
  if (alias) return alias;
  if (ESPEAK_LANGUAGES.has(tag)) return tag;
  const primary = tag.split('-')[0] || 'en';
  return primary; // may be unknown to eSpeak: synthesize then rejects with 'failed'
}

interface Pending {
  id: number;
  text: string;
  voice: string;
  resolve(audio: SynthesizedAudio): void;
  reject(err: SpeechError): void;
  timer: NodeJS.Timeout;
}

/**
 * eSpeak NG in a child process. `synthesize` resolves with 48 kHz mono PCM16 (the engine's
 * 22050 Hz output, resampled in the child, so `toWav48k` only wraps it). Child start-up
 * (loading the 24 MB voice data) takes a few hundred ms, paid on the first call.
 */
export class EspeakSynthesizer implements SpeechSynthesizer {
  readonly provider = 'espeak-ng';
  private readonly workerPath: string;
  private child: ChildProcess | null = null;
  private ready = false;
  private startupTimer: NodeJS.Timeout | null = null;
  private queue: Pending[] = [];
  private inFlight: Pending | null = null;
  private nextId = 1;
  private closed = false;
  private unavailable: string | null = null;
  /** Start-up time of the most recent child, ms (from fork to engine loaded), or null. */
  lastStartupMs: number | null = null;

  /** @param options the worker path; see {@link EspeakOptions}. */
  constructor(options: EspeakOptions = {}) {
    this.workerPath = options.workerPath ?? espeakWorkerPath();
  }

  /**
   * Whether the embedded engine can run here: the optional package and its voice data are
   * installed and the worker is built. Does not start the engine.
   */
  static async available(workerPath: string = espeakWorkerPath()): Promise<boolean> {
    try {
      const main = createRequire(import.meta.url).resolve(ESPEAK_PACKAGE);
      return existsSync(path.join(path.dirname(main), 'espeak-ng.data')) && existsSync(workerPath);
    } catch {
      return false;
    }
  }

  /** Process id of the running child, if any (for diagnostics and tests). */
  get childPid(): number | undefined {
    return this.child?.pid;
  }

  /** See {@link espeakVoiceFor}. */
  voiceFor(language: string): string {
    return espeakVoiceFor(language);
  }

  /**
   * Speaks `text` with eSpeak voice `voice`. The time limit (`opts.timeoutMs`, default 5000 ms)
   * counts from this call, including any wait behind earlier calls and the child's start-up.
   *
   * @throws SpeechError 'timeout', 'crashed', 'unavailable' (package missing, or closed) or
   *         'failed' (unknown voice, engine error)
   */
  synthesize(text: string, voice: string, opts: SynthesizeOptions = {}): Promise<SynthesizedAudio> {
    if (this.closed) return Promise.reject(new SpeechError('the speech engine is closed', 'unavailable'));
    if (this.unavailable) return Promise.reject(new SpeechError(this.unavailable, 'unavailable'));
    const limit =
      opts.timeoutMs !== undefined && Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0 ? opts.timeoutMs : DEFAULT_SYNTHESIS_TIMEOUT_MS;
    return new Promise<SynthesizedAudio>((resolve, reject) => {
      const req: Pending = {
        id: this.nextId++,
        text,
        voice,
        resolve,
        reject,
        timer: setTimeout(() => this.onTimeout(req, limit), limit),
      };
      this.queue.push(req);
      this.pump();
    });
  }

  /** Stops the child; queued and running calls reject with 'unavailable'. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.failAll(new SpeechError('the speech engine was closed', 'unavailable'));
    const child = this.child;
    this.detach();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.ref(); // keep the loop alive until the exit is seen (no unsettled await)
      const force = setTimeout(() => child.kill('SIGKILL'), 2000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  /** Sends the next queued call when the child is idle; starts a child when there is none. */
  private pump(): void {
    if (this.closed || this.inFlight || this.queue.length === 0) return;
    if (!this.child) this.spawn();
    const child = this.child;
    if (!this.ready || !child) return;
    const req = this.queue.shift()!;
    this.inFlight = req;
    const message: WorkerRequest = { type: 'synthesize', id: req.id, text: req.text, voice: req.voice };
    child.send(message, (err) => {
      if (err && this.inFlight === req) this.crash(child, `cannot reach the speech engine: ${err.message}`);
    });
  }

  private spawn(): void {
    if (!existsSync(this.workerPath)) {
      this.unavailable = `the speech worker is not built (${this.workerPath}); run npm run build`;
      this.failAll(new SpeechError(this.unavailable, 'unavailable'));
      return;
    }
    const started = performance.now();
    const child = fork(this.workerPath, [], {
      serialization: 'advanced', // Int16Array crosses IPC as is
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      execArgv: [], // not the parent's loaders or inspector flags
      env: { PATH: process.env.PATH ?? '' }, // none of the daemon's secrets or NODE_OPTIONS
    });
    this.child = child;
    this.ready = false;
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
    this.startupTimer = setTimeout(() => {
      if (this.child === child && !this.ready)
        this.crash(child, `the speech engine did not start within ${STARTUP_TIMEOUT_MS} ms`, 'unavailable');
    }, STARTUP_TIMEOUT_MS);
    this.startupTimer.unref();
    child.on('message', (msg: WorkerReply) => this.onMessage(child, msg, started));
    child.on('error', (err) => this.crash(child, `speech engine process error: ${err.message}`));
    child.on('exit', (code, signal) => this.crash(child, `the speech engine exited (${signal ?? `code ${code}`})`));
  }

  private onMessage(child: ChildProcess, msg: WorkerReply, started: number): void {
    if (child !== this.child) return;
    switch (msg.type) {
      case 'ready':
        this.ready = true;
        this.lastStartupMs = Math.round(performance.now() - started);
        if (this.startupTimer) clearTimeout(this.startupTimer);
        this.pump();
        return;
      case 'fatal':
        this.unavailable = msg.message;
        this.failAll(new SpeechError(msg.message, 'unavailable'));
        this.stopChild(child);
        return;
      case 'result':
      case 'error': {
        const req = this.inFlight;
        if (!req || req.id !== msg.id) return;
        this.inFlight = null;
        clearTimeout(req.timer);
        if (msg.type === 'result') req.resolve({ samples: msg.samples, sampleRate: msg.sampleRate });
        else req.reject(new SpeechError(msg.message, msg.reason));
        this.pump();
      }
    }
  }

  private onTimeout(req: Pending, limit: number): void {
    const error = new SpeechError(`speech synthesis took longer than ${limit} ms`, 'timeout');
    if (this.inFlight === req) {
      this.inFlight = null;
      req.reject(error);
      const child = this.child;
      this.detach(); // the next call starts a fresh child
      if (child) this.stopChild(child);
      this.pump();
      return;
    }
    const i = this.queue.indexOf(req);
    if (i >= 0) this.queue.splice(i, 1);
    req.reject(error);
  }

  /**
   * The child `child` died or misbehaved: the call it was serving rejects with `reason`; a child
   * that died before it was ready fails every queued call (it cannot start). Calls queued behind
   * a crash get a fresh child.
   */
  private crash(child: ChildProcess | null, message: string, reason: 'crashed' | 'unavailable' = 'crashed'): void {
    if (!child || child !== this.child) return;
    const wasReady = this.ready;
    this.detach();
    this.stopChild(child);
    const req = this.inFlight;
    this.inFlight = null;
    if (req) {
      clearTimeout(req.timer);
      req.reject(new SpeechError(message, reason));
    }
    if (!wasReady) this.failAll(new SpeechError(message, reason === 'crashed' ? 'unavailable' : reason));
    else this.pump();
  }

  private detach(): void {
    if (this.startupTimer) clearTimeout(this.startupTimer);
    this.startupTimer = null;
    this.child = null;
    this.ready = false;
  }

  private stopChild(child: ChildProcess): void {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  private failAll(error: SpeechError): void {
    const all = [...(this.inFlight ? [this.inFlight] : []), ...this.queue];
    this.inFlight = null;
    this.queue = [];
    for (const req of all) {
      clearTimeout(req.timer);
      req.reject(error);
    }
  }
}

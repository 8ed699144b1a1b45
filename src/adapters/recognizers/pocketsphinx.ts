/**
 * The embedded speech recogniser: Debian's `pocketsphinx` (0.8+5prealpha) with the
 * `pocketsphinx-en-us` model (BSD; English), run as supervised child processes (docs/media.md).
 * This file is the recogniser and its pool of engine processes.
 *
 * How it runs (measured on the 2-core build machine; see bench/media-rtf.mjs):
 * - One `pocketsphinx_continuous -infile <fifo>` process per utterance, started *ahead of
 *   time*: each grammar keeps `spares` warm processes that have already loaded the acoustic
 *   model, grammar and dictionary and sit blocked reading their own named pipe (FIFO; Node's
 *   child stdin is a socket, which 0.8 cannot `fopen` as `/dev/stdin`). A stream takes a warm
 *   process, writes its audio (16 kHz PCM16LE) into the FIFO as it arrives, and on `finish()`
 *   closes it: the engine ends the utterance at end-of-file, prints the hypothesis with its word
 *   times (`-time yes`) and exits. A replacement is started in the background. The recogniser
 *   holds its end of each FIFO open read-write from before the engine starts, so neither side
 *   blocks on the other, and when the media worker's process dies the engines read end-of-file
 *   and exit: none outlives it. Linux only (FIFO semantics of fifo(7), `/proc/<pid>/fd`), as is
 *   the Debian package.
 * - Why not one long-lived process reused across utterances: 0.8's `continuous` prints only
 *   when its own voice-activity detector sees speech end, and nothing at all for an utterance
 *   without speech, so a reused process gives no reliable end-of-utterance delimiter; its live
 *   cepstral-mean and noise estimates would also carry from one caller to the next. Exit at
 *   end-of-file is an exact delimiter, each caller starts from the same calibrated state (results
 *   are reproducible), and a crash touches one utterance. The cost is one model load per
 *   utterance (≈ 0.1–0.3 s of CPU with a grammar's small dictionary), paid off the critical path
 *   by the warm spare, so the final comes right after the engine has decoded the audio.
 * - Front end: the engine runs on a model directory of its own, with a cepstral-mean start
 *   measured on telephone-band speech (pocketsphinx-engine.ts).
 * - Grammars: `hints.grammar` other than `free` selects a JSGF grammar (pocketsphinx-grammars.ts);
 *   `free` uses the generic language model `en-us.lm.bin` with the full CMUdict.
 * - A stream's audio, output, timings, confidence and partials: pocketsphinx-stream.ts. A grammar
 *   utterance is also decoded by a phone loop for its confidence (pocketsphinx-score.ts), so it
 *   takes two engine processes, both counted against `maxProcesses`.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SAMPLE_RATES } from '../../media/audio-resample.js';
import { engineArgs, killEngine, type Engine, type EngineKind } from './pocketsphinx-engine.js';
import { ScoredGrammarStream } from './pocketsphinx-score.js';
import { pocketsphinxStatus, resolveBinary, type PocketsphinxOptions, type PocketsphinxStatus } from './pocketsphinx-status.js';
import { PocketsphinxStream } from './pocketsphinx-stream.js';
import {
  RecognizerError,
  validateRecognitionOptions,
  type RecognitionGrammar,
  type RecognitionOptions,
  type RecognitionStream,
  type RecognizerPriceBasis,
  type SpeechRecognizer,
} from '../../media/recognizer.js';

export {
  DEFAULT_POCKETSPHINX_BINARY,
  DEFAULT_POCKETSPHINX_MODEL,
  POCKETSPHINX_INSTALL_HINT,
  pocketsphinxStatus,
  type PocketsphinxOptions,
  type PocketsphinxStatus,
} from './pocketsphinx-status.js';

/** The provider key of this recogniser (pricing `stt` table, a turn's `stt_provider`). */
export const POCKETSPHINX_PROVIDER = 'pocketsphinx';

/** Options of a {@link PocketsphinxRecognizer}. */
export interface PocketsphinxRecognizerOptions extends PocketsphinxOptions {
  /** Most engine processes alive at once (warm spares included), ≥ 1; default 16. A stream beyond it fails `unavailable`. */
  maxProcesses?: number;
  /** Warm processes kept per grammar once the grammar has been used (or warmed), 0–4; default 1. */
  spares?: number;
  /** Directory for the generated model files; default a fresh one under the OS temp dir, removed by {@link PocketsphinxRecognizer.close}. */
  workDir?: string;
}

/**
 * The embedded pocketsphinx recogniser (provider `pocketsphinx`, languages `['en']`).
 * Construct it once per media worker; {@link close} it when the worker stops.
 */
export class PocketsphinxRecognizer implements SpeechRecognizer {
  readonly provider = POCKETSPHINX_PROVIDER;
  readonly languages: readonly string[] = ['en'];
  readonly priceBasis: RecognizerPriceBasis = 'audio_second';
  /** What {@link pocketsphinxStatus} said when this recogniser was made. */
  readonly status: PocketsphinxStatus;
  private readonly maxProcesses: number;
  private readonly spares: number;
  private readonly workDir: string;
  private readonly ownsWorkDir: boolean;
  private readonly engines = new Set<Engine>();
  private readonly warm = new Map<EngineKind, Engine[]>();
  private readonly prepared = new Map<EngineKind, string[]>();
  private closed = false;
  private serial = 0;
  /** util-linux's `setpriv`, which starts each engine with a parent-death signal (see {@link Engine.fd}); undefined when not installed. */
  private readonly deathGuard: string | undefined;

  /** @throws RangeError on a `maxProcesses` or `spares` out of range */
  constructor(options: PocketsphinxRecognizerOptions = {}) {
    const max = options.maxProcesses ?? 16;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxProcesses must be a whole number ≥ 1; got ${max}`);
    const spares = options.spares ?? 1;
    if (!Number.isInteger(spares) || spares < 0 || spares > 4) throw new RangeError(`spares must be a whole number 0–4; got ${spares}`);
    this.maxProcesses = max;
    this.spares = spares;
    this.status = pocketsphinxStatus(options);
    this.ownsWorkDir = options.workDir === undefined;
    this.workDir = options.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-pocketsphinx-'));
    this.deathGuard = this.status.available ? resolveBinary('setpriv') : undefined;
  }

  /** Engine processes alive now (warm and busy). */
  get processCount(): number {
    return this.engines.size;
  }

  /** The process ids of the engine processes alive now (for supervision and tests). */
  get pids(): number[] {
    return [...this.engines].map((e) => e.child.pid).filter((p): p is number => p !== undefined);
  }

  /**
   * Starts warm processes for `grammars` now (at worker start-up), so even their first utterance
   * pays no model load (and the phone loop's, for any grammar but `free`). Does nothing when the
   * engine is unavailable or the recogniser closed.
   */
  prewarm(grammars: readonly RecognitionGrammar[]): void {
    for (const g of grammars) this.refill(g);
    if (grammars.some((g) => g !== 'free')) this.refill('phones');
  }

  /**
   * Opens a stream. Trouble (engine not installed, a sample rate the resampler lacks, no free
   * process, recogniser closed) arrives as an `unavailable` error event.
   * @throws RangeError on malformed options (see validateRecognitionOptions) or a language other than English
   */
  start(options: RecognitionOptions): RecognitionStream {
    const checked = validateRecognitionOptions(options, this.languages);
    const grammar = checked.hints?.grammar ?? 'free';
    if (grammar === 'free') return this.open(grammar, checked);
    return new ScoredGrammarStream(checked, this.open(grammar, checked), this.open('phones', checked));
  }

  /** A stream on one engine process of `kind` (a failed one when none can be had). */
  private open(kind: EngineKind, checked: RecognitionOptions): PocketsphinxStream {
    const stream = new PocketsphinxStream(this.provider, checked, kind);
    let problem: string | undefined;
    if (this.closed) problem = 'the recogniser is closed';
    else if (!this.status.available) problem = this.status.reason;
    else if (!(SAMPLE_RATES as readonly number[]).includes(checked.sampleRateHz))
      problem = `sample rate ${checked.sampleRateHz} Hz is not supported (use one of ${SAMPLE_RATES.join(', ')})`;
    if (problem === undefined) {
      try {
        const engine = this.take(kind);
        if (engine) stream.attach(engine);
        else problem = `no free engine process (the limit is ${this.maxProcesses}); try again shortly`;
      } catch (err) {
        problem = `cannot start the engine: ${(err as Error).message}`;
      }
    }
    if (problem !== undefined) stream.failLater(new RecognizerError('unavailable', this.provider, problem));
    return stream;
  }

  /** Stops every engine process and waits for them to exit; streams still open get no further event. Later streams fail `unavailable`. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const waits = [...this.engines].map((e) => {
      e.owner?.abandon();
      return killEngine(e);
    });
    this.warm.clear();
    await Promise.all(waits);
    if (this.ownsWorkDir) fs.rmSync(this.workDir, { recursive: true, force: true });
  }

  /** A warm engine for `grammar` (or a fresh one), or undefined at the process limit. */
  private take(grammar: EngineKind): Engine | undefined {
    const list = this.warm.get(grammar) ?? [];
    let engine: Engine | undefined;
    while (list.length > 0 && !engine) {
      const e = list.shift()!;
      if (!e.exited) engine = e;
    }
    if (!engine) {
      // free a spare of another grammar to stay within the limit
      if (this.engines.size >= this.maxProcesses) this.evictSpare();
      if (this.engines.size >= this.maxProcesses) return undefined;
      engine = this.spawnEngine(grammar);
    }
    queueMicrotask(() => this.refill(grammar));
    return engine;
  }

  private evictSpare(): void {
    for (const list of this.warm.values()) {
      const e = list.shift();
      if (e) {
        void killEngine(e);
        return;
      }
    }
  }

  /** Tops the grammar's warm spares up to {@link spares}, within the process limit. */
  private refill(grammar: EngineKind): void {
    if (this.closed || !this.status.available) return;
    const list = this.warm.get(grammar) ?? [];
    this.warm.set(grammar, list);
    try {
      while (list.filter((e) => !e.exited).length < this.spares && this.engines.size < this.maxProcesses)
        list.push(this.spawnEngine(grammar));
    } catch {
      // the next stream of this grammar starts its own engine and reports the failure
    }
  }

  private spawnEngine(grammar: EngineKind): Engine {
    const args = this.argsFor(grammar);
    const fifo = path.join(this.workDir, `audio-${++this.serial}.fifo`);
    fs.rmSync(fifo, { force: true }); // left by a process that died (a given workDir)
    const made = spawnSync('mkfifo', ['-m', '600', fifo], { stdio: 'ignore' });
    if (made.status !== 0)
      throw new Error(`cannot make the audio pipe ${fifo} (mkfifo ${made.error?.message ?? `exited with ${made.status}`})`);
    // O_RDWR on a FIFO never blocks on Linux (fifo(7)); libuv opens with O_CLOEXEC, so the engine does not inherit it
    const fd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
    // The log (stderr) carries the backtrace's acoustic scores (-backtrace yes) and the engine's errors.
    const engineArgs = [this.status.binary!, ...args, '-infile', fifo, '-time', 'yes', '-backtrace', 'yes', '-dither', 'yes', '-seed', '1'];
    // setpriv sets the signal and execs the engine (same pid); PR_SET_PDEATHSIG, prctl(2)
    const argv = this.deathGuard ? [this.deathGuard, '--pdeathsig', 'KILL', '--', ...engineArgs] : engineArgs;
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    const engine: Engine = { child, fifo, fd, grammar, exited: false };
    this.engines.add(engine);
    const done = (): void => {
      if (engine.exited) return;
      engine.exited = true;
      if (engine.fd >= 0) fs.closeSync(engine.fd);
      engine.fd = -1;
      fs.rmSync(fifo, { force: true });
      this.engines.delete(engine);
      const list = this.warm.get(grammar);
      const i = list?.indexOf(engine) ?? -1;
      if (i >= 0) list!.splice(i, 1);
    };
    child.on('exit', done);
    child.on('error', done);
    return engine;
  }

  /** The engine arguments for `grammar`, writing its model directory, grammar and dictionary on first use. */
  private argsFor(grammar: EngineKind): string[] {
    const known = this.prepared.get(grammar);
    if (known) return known;
    const args = engineArgs(this.workDir, this.status.model!, grammar);
    this.prepared.set(grammar, args);
    return args;
  }
}

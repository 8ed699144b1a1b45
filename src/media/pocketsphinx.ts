/**
 * The embedded speech recogniser: Debian's `pocketsphinx` (0.8+5prealpha) with the
 * `pocketsphinx-en-us` model, run as supervised child processes (issue 16, "Speech recognition":
 * "Embedded: Debian's pocketsphinx + pocketsphinx-en-us (BSD; English) as a child process").
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
 * - Front end: the model's `feat.params` forces a cepstral-mean start value (`-cmninit`) that
 *   command-line options cannot override, and it suits telephone speech badly (the first words
 *   are lost: "nine eight seven" → "oh nine eight eight one"). The recogniser writes a model
 *   directory of links to the real model files with its own `feat.params` (a mean measured on
 *   telephone-band speech) and runs with `-dither yes -seed 1` (digital silence — decoded μ-law
 *   gaps — otherwise breaks the noise estimate; the fixed seed keeps results reproducible).
 * - Grammars: `hints.grammar` other than `free` selects a JSGF grammar (pocketsphinx-grammars.ts);
 *   `free` uses the generic language model `en-us.lm.bin` with the full CMUdict.
 *
 * Timings are stream times from the samples pushed (0.8 prints word times relative to its own
 * voiced frames only): a final covers [first sample of the segment, last sample pushed].
 * Confidence: with the language model, the mean of the word posteriors `-time yes` prints. With
 * a grammar 0.8 prints 1.0 for every word (no alternatives are scored), so a grammar utterance is
 * also decoded by a second engine, a free phone loop (`-allphone`, context-independent phones),
 * and the confidence is the logistic of the per-frame acoustic ratio of the two best paths
 * (pocketsphinx-score.ts; docs/media.md "Confidence"). Each grammar utterance so takes two engine
 * processes, both counted against `maxProcesses`.
 *
 * Partials: when the engine's own detector ends a speech segment inside the stream (a pause of
 * ≥ 0.5 s) it prints that segment's hypothesis; the stream sends the words so far as a `partial`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { StreamingResampler, SAMPLE_RATES } from './audio.js';
import { dictionaryFor, GRAMMARS } from './pocketsphinx-grammars.js';
import { EngineLog, ScoredGrammarStream, type ScoredSegment } from './pocketsphinx-score.js';
import { pocketsphinxStatus, resolveBinary, type PocketsphinxOptions, type PocketsphinxStatus } from './pocketsphinx-status.js';
import {
  RecognizerError,
  validateRecognitionOptions,
  type RecognitionGrammar,
  type RecognitionOptions,
  type RecognitionStream,
  type RecognizerPriceBasis,
  type SpeechRecognizer,
} from './recognizer.js';
import { BaseRecognitionStream } from './recognition-stream.js';

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
/** What an engine process decodes with: a step grammar, or the phone loop that scores grammar hypotheses. */
type EngineKind = RecognitionGrammar | 'phones';
/** Sample rate the en-us acoustic model was trained on, Hz. */
const ENGINE_RATE = 16000;
/** Cepstral-mean start value measured on telephone-band speech (13 coefficients). */
const CMN_INIT = '55.4,-0.1,-5.1,26.6,-10.5,-4.1,-6.7,-19.1,2.1,-14.1,6.3,-6.7,-1.4';
/** Silence appended before end-of-file so the last phone is scored in full, ms. */
const TAIL_PAD_MS = 300;
/** Sample level (of 32 767; about -50 dBFS) that marks the speech onset for the lead-in trim. */
const ONSET_LEVEL = 100;
/** Audio kept before the onset, ms. */
const LEAD_KEEP_MS = 80;
/** How often `finish()` checks whether a still-loading engine has opened its FIFO, ms. */
const OPEN_POLL_MS = 5;

/** Options of a {@link PocketsphinxRecognizer}. */
export interface PocketsphinxRecognizerOptions extends PocketsphinxOptions {
  /** Most engine processes alive at once (warm spares included), ≥ 1; default 16. A stream beyond it fails `unavailable`. */
  maxProcesses?: number;
  /** Warm processes kept per grammar once the grammar has been used (or warmed), 0–4; default 1. */
  spares?: number;
  /** Directory for the generated model files; default a fresh one under the OS temp dir, removed by {@link PocketsphinxRecognizer.close}. */
  workDir?: string;
}

/** One engine process: warm (loaded, waiting) until a stream takes it. */
interface Engine {
  child: ChildProcess;
  /** The named pipe the engine reads its audio from. */
  fifo: string;
  /**
   * Our end of the FIFO, opened read-write and non-blocking before the engine starts (so neither
   * side waits for the other), until a stream wraps it; -1 once handed over or closed. While it
   * is open the engine never sees end-of-file; when this process dies it closes, the engine reads
   * end-of-file and exits. An engine still loading its model then would instead block for ever in
   * its own open() of the FIFO (no writer is left to open it): so engines start under
   * `setpriv --pdeathsig KILL` where util-linux's setpriv is installed, and die with the thread
   * that started them. Either way no engine outlives its media worker.
   */
  fd: number;
  grammar: EngineKind;
  exited: boolean;
  /** Set by the stream that took it. */
  owner?: PocketsphinxStream;
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
    const stream = new PocketsphinxStream(this, checked, kind);
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
    const model = this.status.model!;
    const hmm = path.join(this.workDir, 'hmm');
    if (!fs.existsSync(hmm)) {
      fs.mkdirSync(hmm, { recursive: true });
      for (const f of fs.readdirSync(path.join(model, 'en-us'))) {
        if (f !== 'feat.params') fs.symlinkSync(path.join(model, 'en-us', f), path.join(hmm, f));
      }
      const params = fs
        .readFileSync(path.join(model, 'en-us', 'feat.params'), 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('-cmninit'));
      fs.writeFileSync(path.join(hmm, 'feat.params'), `${params.join('\n').trimEnd()}\n-cmninit ${CMN_INIT}\n`);
    }
    let args: string[];
    if (grammar === 'free') {
      args = ['-hmm', hmm, '-lm', path.join(model, 'en-us.lm.bin'), '-dict', path.join(model, 'cmudict-en-us.dict')];
    } else if (grammar === 'phones') {
      // Context-independent phones: a CD phone loop runs at ~5× real time on the build machine, CI
      // at 0.04×. Language weight 1: with the default 6.5 the phone LM's weighting leaks into the
      // `ascr` the backtrace reports (it comes out above zero, which no acoustic score can).
      args = ['-hmm', hmm, '-allphone', path.join(model, 'en-us-phone.lm.bin'), '-allphone_ci', 'yes', '-lw', '1'];
    } else {
      const source = GRAMMARS[grammar];
      const gram = path.join(this.workDir, `${grammar}.gram`);
      const dict = path.join(this.workDir, `${grammar}.dict`);
      fs.writeFileSync(gram, source.jsgf);
      fs.writeFileSync(
        dict,
        dictionaryFor(source.words, fs.readFileSync(path.join(model, 'cmudict-en-us.dict'), 'utf8'), new Set(source.names ?? [])),
      );
      args = ['-hmm', hmm, '-jsgf', gram, '-dict', dict];
      // Names: no filler words between grammar words, or a weak last syllable turns into silence
      // ("priya sharma" heard as "priya shah" once trailing silence follows). The other grammars
      // do better with them (digits and yes/no lose their first word without).
      if (grammar === 'name') args.push('-fsgusefiller', 'no');
    }
    this.prepared.set(grammar, args);
    return args;
  }
}

/** Whether the engine process has its FIFO open (Linux `/proc/<pid>/fd`, proc(5)). */
function hasOpened(e: Engine): boolean {
  try {
    const dir = `/proc/${e.child.pid}/fd`;
    return fs.readdirSync(dir).some((fd) => {
      try {
        return fs.readlinkSync(`${dir}/${fd}`) === e.fifo;
      } catch {
        return false;
      }
    });
  } catch {
    return false; // gone: its exit reports it
  }
}

/** Ends an engine process (SIGKILL: it holds no state worth saving) and waits for its exit. */
function killEngine(e: Engine): Promise<void> {
  if (e.exited || e.child.exitCode !== null || e.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    e.child.once('exit', () => resolve());
    e.child.kill('SIGKILL');
  });
}

/** A word line of `-time yes`: `word start end posterior`. */
const WORD_LINE = /^(\S+) (-?\d+\.\d+) (-?\d+\.\d+) (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/;
/** A hypothesis line: words (lower case, apostrophes) separated by single spaces, or empty. */
const HYP_LINE = /^(?:[a-z'][a-z'.-]*(?: [a-z'][a-z'.-]*)*)?$/;
/** The phone loop's hypothesis line: CMU phones (upper case) separated by single spaces, or empty. */
const PHONES_LINE = /^(?:[A-Z+]+(?: [A-Z+]+)*)?$/;
/** Fillers and markers of the word lines, not words of the hypothesis. */
const FILLER = /^(?:<s>|<\/s>|<sil>|\(NULL\)|\[[A-Z]+\]|\+\+[A-Z]+\+\+)$/;

class PocketsphinxStream extends BaseRecognitionStream {
  private engine: Engine | undefined;
  private resampler: StreamingResampler | undefined;
  /** Samples pushed (at the stream's rate). */
  private samples = 0;
  /** Recognised segments so far (hypotheses printed by the engine). */
  private readonly segments: string[] = [];
  private readonly posteriors: number[] = [];
  private out = '';
  /** The engine's log: backtrace scores and error lines. */
  private readonly log = new EngineLog();
  private settled = false;
  /** Our end of the engine's FIFO. */
  private pipe: net.Socket | undefined;
  private openTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly owner: PocketsphinxRecognizer,
    readonly options: Readonly<RecognitionOptions>,
    private readonly kind: EngineKind,
  ) {
    super();
  }

  /** The decode's best path with each word's frames and acoustic score. */
  get bestPath(): readonly ScoredSegment[] {
    return this.log.bestPath;
  }

  /** @internal binds the engine process taken for this stream */
  attach(engine: Engine): void {
    this.engine = engine;
    engine.owner = this;
    if (this.options.sampleRateHz !== ENGINE_RATE) this.resampler = new StreamingResampler(this.options.sampleRateHz, ENGINE_RATE);
    const child = engine.child;
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.onOutput(chunk));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => this.log.feed(chunk));
    if (engine.exited) {
      this.failLater(new RecognizerError('crashed', this.owner.provider, 'the pocketsphinx process exited before it was used'));
      return;
    }
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => this.onExit(code, signal)); // after stdout is drained
    // The FIFO's buffer holds ~2 s of audio; the socket queues the rest until the engine reads.
    const pipe = new net.Socket({ fd: engine.fd, readable: false, writable: true });
    engine.fd = -1;
    pipe.on('error', () => undefined); // the engine died: its exit reports it
    this.pipe = pipe;
  }

  /** @internal fails the stream asynchronously (never from inside start/push/finish) */
  failLater(error: RecognizerError): void {
    if (this.settled) return;
    this.settled = true;
    this.current = 'failed';
    this.release();
    setImmediate(() => {
      if (this.current === 'failed') this.events.emit('error', error);
    });
  }

  /** @internal the recogniser is closing: no event after this */
  abandon(): void {
    if (this.current === 'open' || this.current === 'finishing') this.current = 'cancelled';
    this.settled = true;
    this.release();
  }

  protected accept(pcm: Int16Array): void {
    this.samples += pcm.length;
    this.write(this.resampler ? this.resampler.push(pcm) : pcm);
  }

  protected onFinish(): void {
    if (this.resampler) this.write(this.resampler.flush());
    if (this.samples > 0) this.write(new Int16Array(Math.round((ENGINE_RATE * TAIL_PAD_MS) / 1000)));
    this.closeWhenOpened();
  }

  /**
   * Closes our end of the FIFO once the engine has opened its end: the engine then reads the
   * audio and end-of-file. Closed earlier (the engine still loading its model), the FIFO would
   * drop the audio and leave the engine waiting for a writer, so until then it checks every
   * {@link OPEN_POLL_MS} ms.
   */
  private closeWhenOpened(): void {
    this.openTimer = undefined;
    const engine = this.engine;
    const pipe = this.pipe;
    if (!engine || !pipe || this.settled || engine.exited) return;
    if (!hasOpened(engine)) {
      this.openTimer = setTimeout(() => this.closeWhenOpened(), OPEN_POLL_MS);
      return;
    }
    pipe.end(() => pipe.destroy()); // the engine reads end-of-file once it has read the rest
  }

  cancel(): void {
    if (this.current === 'cancelled' || this.current === 'done') return;
    this.current = 'cancelled';
    this.settled = true;
    this.release();
  }

  /**
   * Audio before the speech onset (no sample at or above {@link ONSET_LEVEL} yet), of which
   * only the last {@link LEAD_KEEP_MS} ms reach the engine: 0.8's live cepstral-mean start is
   * thrown off by longer leading silence (a media session's 300 ms pre-roll turned "my name is
   * Priya Sharma" into "tanvi patel"). Null once the onset was seen.
   */
  private lead: Int16Array | null = new Int16Array(0);

  private write(pcm: Int16Array): void {
    if (!this.engine || pcm.length === 0) return;
    if (this.lead !== null) {
      let onset = -1;
      for (let i = 0; i < pcm.length; i++) {
        const v = pcm[i]!;
        if (v >= ONSET_LEVEL || v <= -ONSET_LEVEL) {
          onset = i;
          break;
        }
      }
      const keep = Math.round((ENGINE_RATE * LEAD_KEEP_MS) / 1000);
      const joined = new Int16Array(this.lead.length + pcm.length);
      joined.set(this.lead);
      joined.set(pcm, this.lead.length);
      if (onset < 0) {
        this.lead = joined.slice(Math.max(0, joined.length - keep));
        return;
      }
      const at = this.lead.length + onset;
      this.lead = null;
      pcm = joined.subarray(Math.max(0, at - keep));
    }
    // PCM16 little-endian, as the engine reads it (-input_endian little; the hosts are little-endian)
    if (this.pipe && !this.pipe.destroyed) this.pipe.write(Buffer.copyBytesFrom(pcm));
  }

  /** Kills the engine if it still runs (the stream no longer wants it). */
  private release(): void {
    if (this.openTimer) clearTimeout(this.openTimer);
    this.openTimer = undefined;
    this.pipe?.destroy();
    const e = this.engine;
    if (e && !e.exited) void killEngine(e);
  }

  private onOutput(chunk: string): void {
    if (this.settled) return;
    this.out += chunk;
    let nl: number;
    while ((nl = this.out.indexOf('\n')) >= 0) {
      const line = this.out.slice(0, nl);
      this.out = this.out.slice(nl + 1);
      const word = WORD_LINE.exec(line);
      if (word) {
        if (!FILLER.test(word[1]!)) this.posteriors.push(Number(word[4]));
        continue;
      }
      if (!(this.kind === 'phones' ? PHONES_LINE : HYP_LINE).test(line)) {
        this.failLater(
          new RecognizerError(
            'crashed',
            this.owner.provider,
            `the pocketsphinx process wrote something unexpected: ${JSON.stringify(line.slice(0, 80))}`,
          ),
        );
        return;
      }
      if (line !== '') this.segments.push(line);
      if (this.current === 'open' && line !== '' && this.kind !== 'phones') {
        const partial = { text: this.segments.join(' '), startMs: 0, endMs: this.ms(this.samples) };
        setImmediate(() => {
          if (this.current === 'open' || this.current === 'finishing') this.events.emit('partial', partial);
        });
      }
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.settled) return;
    if (this.current !== 'finishing' || code !== 0 || this.out !== '') {
      const why = signal ? `was killed (${signal})` : `exited with status ${code}`;
      const detail = this.log.errors.at(-1);
      this.failLater(
        new RecognizerError(
          'crashed',
          this.owner.provider,
          `the pocketsphinx process ${why}${this.current === 'open' ? ' while audio was streaming' : ''}${detail ? `: ${detail}` : ''}`,
        ),
      );
      return;
    }
    this.settled = true;
    const text = this.segments.join(' ').replace(/\s+/g, ' ').trim();
    const endMs = this.ms(this.samples);
    // The language model's word posteriors; a grammar's confidence is set by ScoredGrammarStream.
    const confidence =
      text !== '' && this.kind === 'free' && this.posteriors.length > 0
        ? clamp01(this.posteriors.reduce((a, b) => a + b, 0) / this.posteriors.length)
        : 0;
    const final = { text, confidence, startMs: 0, endMs, audioMs: endMs };
    setImmediate(() => {
      if (this.current !== 'finishing') return;
      this.current = 'done';
      this.events.emit('final', final);
    });
  }

  private ms(samples: number): number {
    return (samples / this.options.sampleRateHz) * 1000;
  }
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/**
 * One stream of the embedded recogniser (./pocketsphinx.ts) on one engine process
 * (./pocketsphinx-engine.ts): the audio it writes into the engine's pipe (resampled to 16 kHz,
 * lead-in silence trimmed, a silent tail padded), the engine's output it reads, and the port's
 * events it turns that into.
 *
 * Timings are stream times from the samples pushed (0.8 prints word times relative to its own
 * voiced frames only): a final covers [first sample of the segment, last sample pushed].
 * Confidence: with the language model, the mean of the word posteriors `-time yes` prints. With
 * a grammar 0.8 prints 1.0 for every word (no alternatives are scored), so a grammar utterance is
 * also decoded by a second engine, a free phone loop (`-allphone`, context-independent phones),
 * and the confidence is the logistic of the per-frame acoustic ratio of the two best paths
 * (pocketsphinx-score.ts; docs/media.md "Confidence").
 *
 * Partials: when the engine's own detector ends a speech segment inside the stream (a pause of
 * ≥ 0.5 s) it prints that segment's hypothesis; the stream sends the words so far as a `partial`.
 */
import net from 'node:net';
import { StreamingResampler } from '../../media/audio-resample.js';
import { ENGINE_RATE, hasOpened, killEngine, type Engine, type EngineKind } from './pocketsphinx-engine.js';
import { EngineLog, type ScoredSegment } from './pocketsphinx-score.js';
import { RecognizerError, type RecognitionOptions } from '../../media/recognizer.js';
import { BaseRecognitionStream } from '../../media/recognition-stream.js';

/** Silence appended before end-of-file so the last phone is scored in full, ms. */
const TAIL_PAD_MS = 300;
/** Sample level (of 32 767; about -50 dBFS) that marks the speech onset for the lead-in trim. */
const ONSET_LEVEL = 100;
/** Audio kept before the onset, ms. */
const LEAD_KEEP_MS = 80;
/** How often `finish()` checks whether a still-loading engine has opened its FIFO, ms. */
const OPEN_POLL_MS = 5;

/** A word line of `-time yes`: `word start end posterior`. */
const WORD_LINE = /^(\S+) (-?\d+\.\d+) (-?\d+\.\d+) (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/;
/** A hypothesis line: words (lower case, apostrophes) separated by single spaces, or empty. */
const HYP_LINE = /^(?:[a-z'][a-z'.-]*(?: [a-z'][a-z'.-]*)*)?$/;
/** The phone loop's hypothesis line: CMU phones (upper case) separated by single spaces, or empty. */
const PHONES_LINE = /^(?:[A-Z+]+(?: [A-Z+]+)*)?$/;
/** Fillers and markers of the word lines, not words of the hypothesis. */
const FILLER = /^(?:<s>|<\/s>|<sil>|\(NULL\)|\[[A-Z]+\]|\+\+[A-Z]+\+\+)$/;

/** A stream of the embedded recogniser on one engine process (see the module doc). */
export class PocketsphinxStream extends BaseRecognitionStream {
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
    private readonly provider: string,
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
      this.failLater(new RecognizerError('crashed', this.provider, 'the pocketsphinx process exited before it was used'));
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
            this.provider,
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
          this.provider,
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

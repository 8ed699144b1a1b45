/**
 * The confidence of the embedded recogniser's grammar hypotheses ({@link ./pocketsphinx.ts}).
 *
 * Debian's pocketsphinx 0.8 (0.8+5prealpha) scores no alternatives under a JSGF grammar: every
 * word's posterior is printed as 1.0, and its FSG search never builds the lattice `-bestpath`
 * would need (the flag is read by the n-gram search only). What it does print, with
 * `-backtrace yes`, is the acoustic score of every word of the best path (`ascr`, the engine's
 * integer log-likelihood units, larger is better). A grammar forces *some* path through the
 * audio: on the words it was built for that path fits the audio about as well as anything could;
 * on other speech or on noise it fits much worse. So the measure is a likelihood ratio against a
 * free phone loop (`-allphone` with context-independent phones, the best any phone sequence
 * fits the same audio):
 *
 *   ratio = grammar path's acoustic score per frame − phone loop's acoustic score per frame
 *
 * per 10 ms frame over the grammar's speech (its first word to its last; the silence around,
 * where both fit alike, would only pull every ratio towards zero). The grammar's
 * context-dependent models fit well-heard speech about as well as the loop's context-independent
 * ones, so a correct hearing comes out near zero (a short word even above); a path forced through
 * other words or noise, far below. The ratio maps to 0–1 by the logistic
 * {@link grammarConfidence}. docs/media.md ("Confidence") gives the measured figures.
 */
import { type FinalTranscript, type RecognitionOptions, type RecognitionStream, type RecognizerError } from '../../media/recognizer.js';
import { BaseRecognitionStream } from '../../media/recognition-stream.js';

/** Ratio (engine units per frame) at which a grammar hypothesis gets confidence 0.5. */
export const RATIO_MIDPOINT = -24;
/** Ratio units per e-fold of the odds: the logistic's scale. */
export const RATIO_SCALE = 4;

/**
 * A grammar hypothesis's confidence, 0..1: the logistic of its per-frame acoustic ratio against
 * the phone loop ({@link speechRatio}), `1 / (1 + exp(-(ratio − RATIO_MIDPOINT) / RATIO_SCALE))`.
 * 0 when the ratio is not a finite number (nothing to compare).
 * @param ratio engine units per 10 ms frame
 */
export function grammarConfidence(ratio: number): number {
  if (!Number.isFinite(ratio)) return 0;
  return 1 / (1 + Math.exp(-(ratio - RATIO_MIDPOINT) / RATIO_SCALE));
}

/** One scored word (or phone, or filler) of a best path: frames `start`..`end` inclusive. */
export interface ScoredSegment {
  word: string;
  start: number;
  end: number;
  /** Its acoustic score (engine units). */
  ascr: number;
}

/** Fillers of the grammar's path (silence, noise words), not speech. */
const FILLER_WORD = /^(?:<sil>|<s>|<\/s>|\[[A-Z]+\]|\+\+[A-Z]+\+\+|\+[A-Z]+\+|SIL)$/;

/**
 * The per-frame acoustic ratio of a grammar path against the phone loop over the grammar's
 * speech: the frames from its first word to its last (silence around them left out, where both
 * fit alike), the loop's segments counted pro rata to their overlap with that span.
 * NaN when the grammar path holds no word or the loop covers none of its frames.
 */
export function speechRatio(grammar: readonly ScoredSegment[], loop: readonly ScoredSegment[]): number {
  const words = grammar.filter((s) => !FILLER_WORD.test(s.word));
  if (words.length === 0) return NaN;
  const from = Math.min(...words.map((w) => w.start));
  const to = Math.max(...words.map((w) => w.end));
  let g = 0;
  let gFrames = 0;
  for (const s of grammar) {
    const overlap = Math.min(s.end, to) - Math.max(s.start, from) + 1;
    if (overlap <= 0) continue;
    g += (s.ascr * overlap) / (s.end - s.start + 1);
    gFrames += overlap;
  }
  let l = 0;
  let lFrames = 0;
  for (const s of loop) {
    const overlap = Math.min(s.end, to) - Math.max(s.start, from) + 1;
    if (overlap <= 0) continue;
    l += (s.ascr * overlap) / (s.end - s.start + 1);
    lFrames += overlap;
  }
  if (gFrames === 0 || lFrames === 0) return NaN;
  return g / gFrames - l / lFrames;
}

/** The header of `-backtrace yes`'s table (pocketsphinx.c `ps_end_utt`). */
const TABLE_HEAD = /^word\s+start\s+end\s+pprob\s+ascr\s+lscr\s+lback\s*$/;
/** One row of that table: `word start end pprob ascr lscr lback`. */
const TABLE_ROW = /^(\S+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+(?:\.\d+)?)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s*$/;
/** Lines kept for a crash message: the engine's errors. */
const ERROR_LINE = /ERROR|FATAL/;
/** Most error lines kept. */
const ERRORS_KEPT = 5;

/**
 * Reads an engine's log (stderr) as it arrives: the backtrace tables of every segment it
 * decoded (its best path, scored) and its last error lines.
 */
export class EngineLog {
  private rest = '';
  private inTable = false;
  private readonly rows: ScoredSegment[] = [];
  /** The last error lines the engine logged (at most a few). */
  readonly errors: string[] = [];

  /** Takes the next chunk of the log. */
  feed(chunk: string): void {
    this.rest += chunk;
    let nl: number;
    while ((nl = this.rest.indexOf('\n')) >= 0) {
      this.line(this.rest.slice(0, nl));
      this.rest = this.rest.slice(nl + 1);
    }
  }

  /** The best path's words (phones, fillers) with their frames and scores, in order. */
  get bestPath(): readonly ScoredSegment[] {
    return this.rows;
  }

  private line(line: string): void {
    if (TABLE_HEAD.test(line)) {
      this.inTable = true;
      return;
    }
    if (this.inTable) {
      const row = TABLE_ROW.exec(line);
      if (row) {
        const [, word, start, end, , ascr] = row;
        if (word !== '(NULL)' && Number(start) >= 0) {
          this.rows.push({ word: word!, start: Number(start), end: Number(end), ascr: Number(ascr) });
        }
        return;
      }
      this.inTable = false;
    }
    if (ERROR_LINE.test(line)) {
      this.errors.push(line.slice(0, 200));
      if (this.errors.length > ERRORS_KEPT) this.errors.shift();
    }
  }
}

/** A recognition stream that also tells its decode's scored best path once its final came. */
export interface ScoredStream extends RecognitionStream {
  /** The decode's best path, scored (every segment); read after the final. */
  readonly bestPath: readonly ScoredSegment[];
}

/**
 * A grammar utterance heard by two engines at once: the grammar's (the words) and the phone
 * loop's (the reference score). Audio, `finish()` and `cancel()` go to both; partials come from
 * the grammar's; the final is the grammar's text with {@link grammarConfidence} of the two
 * best paths (0 for an empty text). Either engine failing fails the stream: without the loop there
 * is no measure, and none is invented.
 */
export class ScoredGrammarStream extends BaseRecognitionStream {
  private grammarFinal: FinalTranscript | undefined;
  private loopDone = false;
  private settled = false;

  constructor(
    readonly options: Readonly<RecognitionOptions>,
    private readonly grammar: ScoredStream,
    private readonly loop: ScoredStream,
  ) {
    super();
    grammar.on('partial', (p) => {
      if (!this.settled) this.events.emit('partial', p);
    });
    grammar.on('final', (f) => {
      this.grammarFinal = f;
      this.settle();
    });
    loop.on('final', () => {
      this.loopDone = true;
      this.settle();
    });
    grammar.on('error', (e) => this.fail(e));
    loop.on('error', (e) => this.fail(e));
  }

  protected accept(pcm: Int16Array): void {
    this.grammar.push(pcm);
    if (this.loop.state === 'open') this.loop.push(pcm);
  }

  protected onFinish(): void {
    this.grammar.finish();
    if (this.loop.state === 'open') this.loop.finish();
  }

  cancel(): void {
    if (this.current === 'cancelled' || this.current === 'done') return;
    this.current = 'cancelled';
    this.settled = true;
    this.grammar.cancel();
    this.loop.cancel();
  }

  private fail(error: RecognizerError): void {
    if (this.settled) return;
    this.settled = true;
    this.current = 'failed';
    this.grammar.cancel();
    this.loop.cancel();
    this.events.emit('error', error);
  }

  private settle(): void {
    const f = this.grammarFinal;
    if (this.settled || !f || !this.loopDone) return;
    this.settled = true;
    const confidence = f.text === '' ? 0 : grammarConfidence(speechRatio(this.grammar.bestPath, this.loop.bestPath));
    this.current = 'done';
    this.events.emit('final', { ...f, confidence });
  }
}

/**
 * What the caller of `vagent call simulate` said at each turn, and whether the recogniser heard
 * it (docs/media.md "Trying an agent without a phone").
 *
 * The session's turns are paired with the caller's steps in order, by kind: a turn heard by a
 * recogniser (or an utterance it could not hear: event `not_heard`) takes the next `--say` or
 * `--wav` line; a keyed turn (`stt_provider: dtmf`) the next `--dtmf`; the other phone-line
 * events (silence, giving up, the time limit) take no step. A `--say` line is heard right
 * when the recogniser's text says the same words once both are read as the slot extractors
 * read them (src/engine/slots/same-words.ts): "five p m" heard as "5 pm" is not a mismatch.
 */
import { sameWords } from '../../engine/slots/same-words.js';

/** One caller step, as the plan has it (the audio is not needed here). */
export type SaidStep = { kind: 'say'; text: string } | { kind: 'wav'; file: string } | { kind: 'dtmf'; digits: string };

/** A session turn, as far as the pairing reads it (Session detail's raw turn list). */
export interface HeardTurn {
  index?: number;
  user_text?: string;
  stt_provider?: string | null;
  event?: string;
}

/** What a turn was said as. */
export interface SaidVerdict {
  /** The `--say` text, the `--wav` file name or the `--dtmf` keys; null for a turn no step made (silence). */
  said: string | null;
  /** True when heard as said, false when misheard; null when there is nothing to compare (a WAV, keys, silence). */
  match: boolean | null;
}

/** A misheard line. */
export interface Mismatch {
  /** The session turn's index (as `vagent session show` numbers turns). */
  turn: number | null;
  said: string;
  heard: string;
}

/** Pairs the session's turns with the caller's steps as they arrive (see the module comment). */
export class SaidTracker {
  private spoken = 0;
  private keyed = 0;
  private readonly speech: Array<Extract<SaidStep, { kind: 'say' | 'wav' }>>;
  private readonly keys: Array<Extract<SaidStep, { kind: 'dtmf' }>>;
  /** The misheard lines so far, in order. */
  readonly mismatches: Mismatch[] = [];

  constructor(steps: readonly SaidStep[]) {
    this.speech = steps.filter((s): s is Extract<SaidStep, { kind: 'say' | 'wav' }> => s.kind !== 'dtmf');
    this.keys = steps.filter((s): s is Extract<SaidStep, { kind: 'dtmf' }> => s.kind === 'dtmf');
  }

  /** The spoken lines of the script (`--say`, `--wav`). */
  get lines(): number {
    return this.speech.length;
  }

  /** The spoken lines a session turn has answered so far (heard, misheard or not heard). */
  get heardLines(): number {
    return this.spoken;
  }

  /** The verdict on the next turn (call once per turn, in order). */
  next(turn: HeardTurn): SaidVerdict {
    if (turn.stt_provider === 'dtmf') {
      const step = this.keys[this.keyed++];
      return { said: step?.digits ?? null, match: null };
    }
    if (turn.event !== undefined && turn.event !== 'not_heard') return { said: null, match: null };
    const step = this.speech[this.spoken++];
    if (!step) return { said: null, match: null };
    if (step.kind === 'wav') return { said: step.file, match: null };
    const heard = turn.event === 'not_heard' ? '' : (turn.user_text ?? '');
    const match = sameWords(step.text, heard);
    if (!match) this.mismatches.push({ turn: turn.index ?? null, said: step.text, heard });
    return { said: step.text, match };
  }
}

/**
 * The `--strict` failure message naming the misheard turns, e.g.
 * `1 line was misheard: turn 9 heard "the what" for "fever"`.
 */
export function mismatchMessage(mismatches: readonly Mismatch[]): string {
  const n = mismatches.length;
  const each = mismatches.map(
    (m) =>
      `${m.turn === null ? 'a turn' : `turn ${m.turn}`} heard ${m.heard === '' ? 'nothing' : JSON.stringify(m.heard)} for ${JSON.stringify(m.said)}`,
  );
  return `${n} line${n === 1 ? ' was' : 's were'} misheard: ${each.join('; ')}`;
}

/**
 * The early clip of a streamed model reply on a phone call (docs/llm.md "The first sentence on a
 * call", docs/media.md "The early clip"): while the model's reply streams in, its first sentence
 * is cut off as soon as it is complete (a sentence end `.` `?` `!` `।` followed by a space, or a
 * length bound), checked on its own — it cannot be taken back once played — and handed to the
 * call's media to be synthesised and played while the rest is generated. The turn then stores its
 * reply cut after that sentence, reusing the sentence's audio, and charges what it synthesised.
 */
import type { ClipSpec } from '../engine/state.js';
import type { ClipRef } from '../media/worker-protocol.js';
import { spokenTextOf, type ClipView } from './clips.js';
import { otherScript } from './llm-step.js';
import type { EnsuredClip, SpeechPort } from './speech-port.js';

/** Longest first sentence, characters: without a sentence end by then, the text is cut at the last space before it. */
export const EARLY_MAX_CHARS = 160;

/** Fewest characters a first sentence has (shorter, such as "Yes.", waits for more: it would be a clip of its own for little gain). */
export const EARLY_MIN_CHARS = 12;

/** A sentence end: `.` `?` `!` or the Devanagari danda `।` (`॥`), then white space (so "1.5" and "U.P.I" are no end). */
const SENTENCE_END = /[.?!।॥]["')\]]?\s/u;

/**
 * The first sentence of a reply streamed so far (`text`, the deltas joined), or null while it is
 * not complete: the text up to the first sentence end of at least {@link EARLY_MIN_CHARS}
 * characters, or, past {@link EARLY_MAX_CHARS} characters with none, up to the last space before
 * that bound. White space is collapsed as the whole reply's check does (`checkCompletion`).
 */
export function firstSentence(text: string): string | null {
  const flat = text.replace(/\s+/g, ' ').replace(/^ /, '');
  let from = 0;
  for (;;) {
    const m = SENTENCE_END.exec(flat.slice(from));
    if (!m) break;
    const end = from + m.index + m[0].length - 1;
    if (end >= EARLY_MIN_CHARS) return flat.slice(0, end).trim();
    from = end + 1;
  }
  if (flat.length <= EARLY_MAX_CHARS) return null;
  const space = flat.lastIndexOf(' ', EARLY_MAX_CHARS);
  return space >= EARLY_MIN_CHARS ? flat.slice(0, space).trim() : null;
}

/**
 * Why a first sentence may not be played before the whole reply is known, or null when it may:
 * `empty` (no letter or digit), `too_long` (over {@link EARLY_MAX_CHARS}), `other_language`
 * (the whole reply's script rule, `otherScript`, applied to the sentence alone).
 */
export function earlyRefusal(sentence: string, language: string): 'empty' | 'too_long' | 'other_language' | null {
  if (!/[\p{L}\p{N}]/u.test(sentence)) return 'empty';
  if (sentence.length > EARLY_MAX_CHARS) return 'too_long';
  if (otherScript(sentence, language)) return 'other_language';
  return null;
}

/**
 * Watches a streamed reply's deltas and tells `onSentence` its first sentence once, when it is
 * complete and passes {@link earlyRefusal}. A refused first sentence ends the watch: nothing is
 * played early, and the whole reply is said (or refused) as without streaming.
 */
export class FirstSentenceWatch {
  private text = '';
  private done = false;

  /**
   * @param language the agent's BCP-47 language (its script rule)
   * @param onSentence told the first sentence (collapsed white space), at most once; must not throw
   */
  constructor(
    private readonly language: string,
    private readonly onSentence: (sentence: string) => void,
  ) {}

  /** A piece of the streamed reply, in order. */
  push(delta: string): void {
    if (this.done) return;
    this.text += delta;
    const sentence = firstSentence(this.text);
    if (sentence === null) return;
    this.done = true;
    if (earlyRefusal(sentence, this.language) === null) this.onSentence(sentence);
  }
}

/**
 * What remains to be said of reply `whole` after its first sentence `played` went out early: the
 * text after it (trimmed; '' when nothing remains), or null when `whole` does not begin with it
 * (the reply said is not the one streamed: then it is said whole).
 */
export function restAfter(whole: string, played: string): string | null {
  const flat = whole.replace(/\s+/g, ' ').trim();
  if (!flat.startsWith(played)) return null;
  return flat.slice(played.length).trim();
}

/**
 * A first sentence as synthesised for the line: the sentence, what the audio cache gave for it
 * (its key, and on a live call the characters a provider was paid for), and whether it was
 * played (handed to the call's media before the turn ended).
 */
export interface EarlySpeech {
  sentence: string;
  clip: EnsuredClip;
  played: boolean;
}

/**
 * Told a streamed reply's checked first sentence, with the language and voice it is spoken in;
 * resolves once it is synthesised (null when synthesis failed: nothing was played, nothing spent).
 */
export type FirstSentenceSink = (sentence: string, speech: { language: string; voice: string }) => Promise<EarlySpeech | null>;

/**
 * The turn's clips with the model's reply clip (`source: llm`) cut in two after `sentence`, the
 * first sentence played early: that sentence, then the rest of the reply (none when nothing
 * remains), each with the reply clip's flags; null when no reply clip begins with it (the reply
 * said is not the one streamed: the rules' re-prompt). So the turn stores, answers and plays the
 * audio made once for the line, and only the rest is synthesised after it.
 */
export function splitEarly(clips: readonly ClipSpec[], sentence: string): ClipSpec[] | null {
  const i = clips.findIndex((c) => c.flags.source === 'llm' && c.speak === undefined);
  if (i < 0) return null;
  const reply = clips[i]!;
  const rest = restAfter(reply.text, sentence);
  if (rest === null) return null;
  const parts: ClipSpec[] = [{ text: sentence, flags: { ...reply.flags } }];
  if (rest !== '') parts.push({ text: rest, flags: { ...reply.flags } });
  return [...clips.slice(0, i), ...parts, ...clips.slice(i + 1)];
}

/**
 * One phone turn's early clip (docs/media.md "The early clip"): {@link EarlyClip.sink} synthesises
 * the first sentence it is told (a dynamic clip of the audio cache), hands it to `send` (the
 * call's media, which plays it while the turn is still running) and tells the turn what it cost
 * ({@link EarlySpeech}); the turn then stores the reply cut after it ({@link splitEarly}), and
 * {@link EarlyClip.finish} gives the turn's clips less the one already played. A synthesis
 * failure plays nothing early (the reply is said whole).
 */
export class EarlyClip {
  private pending: Promise<EarlySpeech | null> = Promise.resolve(null);
  private closed = false;
  private told = false;

  /** @param send plays a clip on the call now (its turn is still running); must not throw */
  constructor(
    private readonly speech: SpeechPort,
    private readonly send: (clip: ClipRef) => void,
  ) {}

  /** The {@link FirstSentenceSink} of the turn. */
  readonly sink: FirstSentenceSink = (sentence, where) => {
    if (this.closed || this.told) return Promise.resolve(null);
    this.told = true;
    this.pending = this.synthesise(sentence, where).then((clip) => {
      if (clip === null) return null;
      const file = this.speech.fileOf(this.speech.nameOf(clip.key));
      if (this.closed || file === null) return { sentence, clip, played: false };
      this.send({ file, text: sentence, bargeIn: true, asksConfirmation: false });
      return { sentence, clip, played: true };
    });
    return this.pending;
  };

  /**
   * The reply clips (`toRef` of each of `clips`, the turn's answer) the line hears after the early
   * clip: unchanged when none was played; else without the clip of the played sentence (the
   * turn cut its reply there, {@link splitEarly}). When the reply said is not the one streamed
   * (its checks refused it: the rules' re-prompt), the clips are unchanged: the played sentence
   * is followed by the re-prompt. Waits for a synthesis still running; later sentences are ignored.
   */
  async finish(clips: readonly ClipView[], toRef: (c: ClipView) => ClipRef): Promise<ClipRef[]> {
    const early = await this.pending;
    this.closed = true;
    const refs = clips.map(toRef);
    if (!early?.played) return refs;
    const i = clips.findIndex((c) => (c as { source?: unknown }).source === 'llm' && c.text === early.sentence);
    return i < 0 ? refs : refs.filter((_, j) => j !== i);
  }

  /** `text` synthesised (or found in the cache) in the turn's voice; null when synthesis failed. */
  private async synthesise(text: string, where: { language: string; voice: string }): Promise<EnsuredClip | null> {
    try {
      return await this.speech.ensure(spokenTextOf(this.speech, text, where.language, where.voice), where.voice);
    } catch {
      return null;
    }
  }
}

/** What a turn renders after its early sentence ({@link earlyPlan}). */
export interface EarlyPlan {
  /** The clips to render: the engine's, or cut after the played sentence. */
  clips: ClipSpec[];
  /** The played sentence's clip by its cache key, for `renderClips` to count rather than look up; absent when not cut. */
  ensured?: ReadonlyMap<string, EnsuredClip>;
  /** A sentence synthesised for the line but not part of the reply rendered: the turn still pays for it. */
  apart: EnsuredClip | null;
}

/**
 * The clips a turn renders given its early sentence `early` (null: none was synthesised): cut
 * after it when it was played and the reply begins with it ({@link splitEarly}), else as they
 * are, with the sentence's synthesis to be charged apart.
 * @param keyOf the cache key of a clip text in the turn's voice
 */
export function earlyPlan(clips: ClipSpec[], early: EarlySpeech | null, keyOf: (text: string) => string): EarlyPlan {
  if (early === null) return { clips, apart: null };
  const split = early.played ? splitEarly(clips, early.sentence) : null;
  if (split === null) return { clips, apart: early.clip };
  return { clips: split, ensured: new Map([[keyOf(early.sentence), early.clip]]), apart: null };
}

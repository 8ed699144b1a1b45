/**
 * The early clip of a streamed model reply on a phone call (docs/llm.md "The first sentence on a
 * call", docs/media.md "The early clip"): while the model's reply streams in, its first sentence
 * is cut off as soon as it is complete (a sentence end `.` `?` `!` `।` followed by a space, or a
 * length bound), checked on its own — it cannot be taken back once played — and handed to the
 * call's media to be synthesised and played while the rest is generated. What the turn stores and
 * answers is unchanged: this is only what the line hears earlier.
 */
import type { ClipRef } from '../media/worker-protocol.js';
import { spokenTextOf, type ClipView } from './clips.js';
import { otherScript } from './llm-step.js';
import type { SpeechPort } from './speech-port.js';

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

/** Told a streamed reply's checked first sentence, with the language and voice it is spoken in. */
export type FirstSentenceSink = (sentence: string, speech: { language: string; voice: string }) => void;

/**
 * One phone turn's early clip (docs/media.md "The early clip"): {@link EarlyClip.sink} synthesises
 * the first sentence it is told (a dynamic clip of the audio cache) and hands it to `send` (the
 * call's media, which plays it while the turn is still running); {@link EarlyClip.finish} then
 * gives the turn's reply clips as the line is to hear them after it: the model's reply clip
 * replaced by what remains of it. A synthesis failure plays nothing early (the reply is said
 * whole). Nothing here changes what the turn stores or answers.
 */
export class EarlyClip {
  private played: string | null = null;
  private pending: Promise<void> = Promise.resolve();
  private where: { language: string; voice: string } | null = null;
  private closed = false;

  /** @param send plays a clip on the call now (its turn is still running); must not throw */
  constructor(
    private readonly speech: SpeechPort,
    private readonly send: (clip: ClipRef) => void,
  ) {}

  /** The {@link FirstSentenceSink} of the turn. */
  readonly sink: FirstSentenceSink = (sentence, where) => {
    if (this.closed || this.where !== null) return;
    this.where = where;
    this.pending = this.clipOf(sentence).then((clip) => {
      if (this.closed || clip.file === null) return;
      this.send(clip);
      this.played = sentence;
    });
  };

  /**
   * The reply clips (`toRef` of each of `clips`, the turn's answer) the line hears after the early
   * clip: unchanged when none was played; else the model's reply clip (`source: llm`) replaced
   * by the rest of its text (dropped when nothing remains). When the reply said is not the one
   * streamed (its checks refused it: the rules' re-prompt), the clips are unchanged: the played
   * sentence is followed by the re-prompt. Waits for a synthesis still running; later sentences
   * are ignored.
   */
  async finish(clips: readonly ClipView[], toRef: (c: ClipView) => ClipRef): Promise<ClipRef[]> {
    await this.pending;
    this.closed = true;
    const refs = clips.map(toRef);
    const played = this.played;
    if (played === null) return refs;
    const i = clips.findIndex((c) => (c as { source?: unknown }).source === 'llm');
    const rest = i < 0 ? null : restAfter(clips[i]!.text, played);
    if (rest === null) return refs;
    if (rest === '') return refs.filter((_, j) => j !== i);
    const { file, text } = await this.clipOf(rest);
    refs[i] = { ...refs[i]!, file, text };
    return refs;
  }

  /** `text` synthesised (or found in the cache) as a clip; without audio when synthesis failed. */
  private async clipOf(text: string): Promise<ClipRef> {
    const { language, voice } = this.where!;
    let file: string | null = null;
    try {
      const got = await this.speech.ensure(spokenTextOf(this.speech, text, language, voice), voice);
      file = this.speech.fileOf(this.speech.nameOf(got.key));
    } catch {
      file = null;
    }
    return { file, text, bargeIn: true, asksConfirmation: false };
  }
}

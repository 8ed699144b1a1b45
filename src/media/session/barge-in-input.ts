/**
 * What the barge-in decision (`decideBargeIn` in media/barge-in.ts, docs/media.md "How a call behaves") is given when the
 * caller speaks while a reply plays: how long they have spoken, what the recogniser heard so far,
 * whether a partial may still come, and the playing clip's flags.
 */
import type { BargeInInput } from '../barge-in.js';
import type { ReplyClip } from '../call-session-port.js';
import type { Utterance } from './listening.js';

/**
 * The decision's input for utterance `u` at stream time `nowMs` (ms, the segmenter's clock) over
 * `clip` (the clip playing, if any). `streamsPartials`: the recogniser sends partial transcripts.
 */
export function speechBargeInInput(u: Utterance, nowMs: number, clip: ReplyClip | undefined, streamsPartials: boolean): BargeInInput {
  return {
    playing: true,
    speaking: true,
    speechMs: Math.max(0, nowMs - u.onsetMs),
    partialText: u.partial || undefined,
    partialsExpected: streamsPartials && u.stream !== null && u.stream.state === 'open',
    clip: clip
      ? {
          ...(clip.bargeIn === false ? { barge_in: false } : {}),
          ...(clip.asksConfirmation ? { is_confirm_prompt: true as const } : {}),
        }
      : undefined,
  };
}

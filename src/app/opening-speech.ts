/**
 * The speech a session's open pays for (docs/api-decisions.md "Costs"): the opening's clips and,
 * when the session's voice has a price, the session's own prompt texts (those that say the
 * customer's name or a context value), synthesised before the session is written, so what they
 * cost is known and recorded with the session's row in its one write step. The tenant's budget is
 * checked first, with the worst cost of what is not cached yet. A voice that costs nothing
 * leaves the session's texts to be synthesised after the open (best effort): nothing to charge.
 */
import { parseCloudVoiceId } from '../domain/voice.js';
import { ZERO_COST, type CostMicro } from '../domain/money.js';
import type { Pricing } from '../config/pricing.js';
import type { CompiledAgent, ClipSpec } from '../engine/state.js';
import { isTemplate, renderTemplate, usesOnlySessionVars } from '../engine/template.js';
import { meterClip, renderClips, spokenTextOf, type RenderedReply } from './clips.js';
import type { SpeechPort } from './speech-port.js';

/** What the opening of a session needs to know and do (the session service's own parts). */
export interface OpeningDeps {
  speech: SpeechPort;
  pricing: Pricing;
  /** Base URL of audio links. */
  audioBaseUrl: string;
  onSpeechError?: ((err: unknown) => void) | undefined;
  /**
   * The tenant budget check before paid synthesis: `check` throws `rate_limit_exceeded` when
   * `extraMicro` more would pass the tenant's budget today (src/app/budget.ts). Absent: no check.
   */
  budget?: { check(tenantId: string, extraMicro: number): void } | undefined;
}

/** A session's values, as templates read them. */
type SessionVars = { customer_name: string | null; context: Record<string, unknown> };

/** The opening's speech and what the open costs. */
export interface OpeningSpeech {
  /** The opening's clips with their audio. */
  rendered: RenderedReply;
  /** Cache keys to pin while the session is open: the opening's and its texts synthesised now. */
  keys: string[];
  /** Spoken texts of the session to synthesise after the open (a free voice), in `voice`. */
  later: string[];
  /** The open's cost, micro-rupees (`tts` only). */
  cost: CostMicro;
  /** Characters the open sent to live synthesis. */
  ttsChars: number;
}

/**
 * The session's own prompt texts, spoken: its steps' questions and re-prompts and the closing
 * that are templates of session values only (a customer's name), rendered, distinct.
 */
function sessionTexts(speech: SpeechPort, agent: CompiledAgent, vars: SessionVars, voice: string): string[] {
  const texts = agent.def.steps
    .flatMap((st) => [st.ask, st.reprompt ?? ''])
    .concat(agent.def.closing)
    .filter((t) => t && isTemplate(t) && usesOnlySessionVars(t))
    .map((t) => spokenTextOf(speech, renderTemplate(t, vars), agent.def.language, voice));
  return [...new Set(texts)];
}

/**
 * The engines that may speak `voice`, by pricing key: its cloud provider when it is one the
 * port speaks with (or may), and the embedded engine, which speaks a cloud voice's clip it fails.
 */
function enginesOf(speech: SpeechPort, voice: string): string[] {
  const cloud = parseCloudVoiceId(voice);
  if (cloud === null) return [speech.provider];
  const spoken = speech.cloudProviders === undefined || speech.cloudProviders.includes(cloud.provider);
  return spoken ? [cloud.provider, speech.provider] : [speech.provider];
}

/** Unicode code points of `text`: what a provider bills (`EnsuredClip.chars`). */
const codePoints = (text: string): number => [...text].length;

/**
 * Renders the opening `clips` of a new session in `voice` and, when the voice has a price,
 * synthesises the session's texts now; returns the audio and what the open cost.
 * @throws ApiError rate_limit_exceeded when the tenant's budget cannot pay for the synthesis
 *         still to do (nothing has been synthesised then).
 */
export async function renderOpening(
  deps: OpeningDeps,
  tenantId: string,
  agent: CompiledAgent,
  vars: SessionVars,
  voice: string,
  clips: ClipSpec[],
): Promise<OpeningSpeech> {
  const { speech, pricing } = deps;
  const language = agent.def.language;
  const engines = enginesOf(speech, voice);
  const paid = engines.some((e) => pricing.ttsMicro(e, 1000) > 0);
  const openingKeys = new Set(clips.map((c) => speech.keyFor(spokenTextOf(speech, c.speak ?? c.text, language, voice), voice)));
  const own = sessionTexts(speech, agent, vars, voice).filter((t) => !openingKeys.has(speech.keyFor(t, voice)));
  const now = paid ? own : [];
  if (paid && deps.budget) {
    // The worst case: every text not cached yet, at the dearest engine that may speak it.
    const missing = [...new Set([...clips.map((c) => spokenTextOf(speech, c.speak ?? c.text, language, voice)), ...now])]
      .filter((t) => !speech.has(speech.keyFor(t, voice)))
      .reduce((n, t) => n + codePoints(t), 0);
    const worst = Math.max(...engines.map((e) => pricing.ttsMicro(e, missing)));
    if (worst > 0) deps.budget.check(tenantId, worst);
  }
  const [rendered, ensured] = await Promise.all([
    renderClips(speech, clips, language, voice, deps.audioBaseUrl, deps.onSpeechError),
    Promise.all(
      now.map((t) =>
        speech.ensure(t, voice).catch((err: unknown) => {
          deps.onSpeechError?.(err);
          return null;
        }),
      ),
    ),
  ]);
  // The session's own texts are metered with the opening's clips: the open pays for both.
  const keys = [...rendered.keys];
  for (const clip of ensured) {
    if (clip === null) continue;
    meterClip(rendered, clip, speech.provider);
    keys.push(clip.key);
  }
  return {
    rendered,
    keys,
    later: paid ? [] : own,
    cost: { ...ZERO_COST, tts: pricing.ttsMicroOf(rendered.liveCharsBy) },
    ttsChars: rendered.liveChars,
  };
}

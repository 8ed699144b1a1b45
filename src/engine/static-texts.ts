/**
 * The static texts of an agent (docs/architecture.md "Speech and the audio cache"): every line known before any caller speaks, so
 * it can be synthesised when the agent is applied and replies are served from the cache.
 */
import { isTemplate } from './template.js';
import { digitWord } from './spoken.js';
import type { CompiledAgent } from './state.js';

/**
 * The static texts of the agent's opening, as a session's first reply says them
 * (`openingClips` in ./turn.ts): its opening lines, then the first step's question when no
 * opening line asks for the caller's input. Lines with placeholders are left out (they are
 * rendered per session). Deduplicated, in order; the first texts {@link staticTexts} lists.
 */
export function staticOpeningTexts(agent: CompiledAgent): string[] {
  const { def } = agent;
  const texts = def.opening.map((o) => o.text);
  const first = def.steps[0];
  if (first && !def.opening.some((o) => o.requires_user_input)) texts.push(first.ask);
  return [...new Set(texts.filter((t) => t.length > 0 && !isTemplate(t)))];
}

/**
 * Every static text of the agent: opening, asks, re-prompts, fallbacks, stop lines, FAQ answers, closing,
 * engine lines (fillers, not-understood, confirm prompt, …; the keypad offer only when a step
 * captures digits) and the digits 0–9 as words.
 * Texts with placeholders are left out (they are rendered per session). Deduplicated, in order.
 */
export function staticTexts(agent: CompiledAgent): string[] {
  const { def, messages } = agent;
  const texts: string[] = staticOpeningTexts(agent);
  for (const o of def.opening) texts.push(o.text);
  for (const s of def.steps) {
    texts.push(s.ask);
    if (s.reprompt) texts.push(s.reprompt);
    if (s.fallback) texts.push(s.fallback);
    if (s.stop_if) texts.push(s.stop_if.say);
  }
  for (const f of def.faq) texts.push(f.answer);
  texts.push(def.closing);
  const { readback: _template, fillers, keypad_offer: keypad, ...lines } = messages;
  texts.push(...fillers, ...Object.values(lines));
  // Said only by a `digits` step on a phone call (src/engine/turn.ts `offerKeypad`).
  if (def.steps.some((s) => s.capture?.type === 'digits')) texts.push(keypad);
  if (def.steps.some((s) => s.confirm === 'digits')) {
    for (let d = 0; d <= 9; d++) texts.push(digitWord(String(d), def.language));
  }
  return [...new Set(texts.filter((t) => !isTemplate(t)))];
}

/**
 * The engine's readback layer: a caller turn while a captured value awaits confirmation — yes
 * keeps it, no (or a corrected value) asks again or takes the correction, anything else reads the
 * value back again (digit by digit, the step's `readback` sentence, or the `heard_readback` line).
 */
import { heardBelow, minConfidence } from './confidence.js';
import { matchFaq } from './intents.js';
import { detectYesNo } from './slots/index.js';
import type { Turn } from './turn-context.js';

/** The pending readback layer of {@link runTurn}; null when nothing awaits confirmation. */
export function confirmTurn(t: Turn): string | null {
  const pending = t.state.confirm;
  if (!pending) return null;
  const step = t.agent.def.steps[t.agent.stepIndex.get(pending.step)!]!;
  const slot = step.capture!.slot;
  let yes = detectYesNo(t.input.text);
  // A yes or no heard below the yes_no threshold is no answer: the readback is asked again.
  const lowYes = yes !== null && heardBelow(t.agent.def, 'yes_no', t.input.sttConfidence);
  if (lowYes) yes = null;
  // A yes/no step's own answer is the yes or no above, never a correction; nor is a yes or no to
  // a free-text readback (the text extractor would take "no" itself as the new text).
  const type = step.capture!.type;
  const corrected = type === 'yes_no' || (type === 'text' && detectYesNo(t.input.text) !== null) ? null : t.extract(step, 'answer');
  const isNew = corrected !== null && corrected !== pending.value;
  const detail = isNew ? 'correction' : lowYes ? 'low_confidence' : yes === null ? 'unclear' : yes ? 'yes' : 'no';
  const heard = lowYes ? { confidence: t.input.sttConfidence!, threshold: minConfidence(t.agent.def, 'yes_no') } : {};
  t.trace.push({ layer: 'confirm', result: yes !== null || isNew ? 'match' : 'miss', detail, slot, ...heard });
  if (isNew) {
    const low = t.lowConfidence(step, 'confirm', 'match');
    if (low) t.trace.push(low);
    pending.value = corrected;
    pending.attempts = 0;
    // a value heard below its threshold (now or before) waits for the caller's yes
    if (low) pending.heard = low.confidence ?? null;
    if (pending.heard === undefined) t.state.slots[slot] = corrected;
    else delete t.state.slots[slot]; // the value it replaces was denied
    t.clips.push(...t.pendingClips(step, pending));
    return 'confirm';
  }
  if (yes === true) {
    t.state.slots[slot] = pending.value;
    t.state.confirm = null;
    if (!t.settle(step)) {
      t.filler();
      t.advance();
    }
    return 'confirm';
  }
  if (yes === false) {
    t.state.confirm = null;
    delete t.state.slots[slot];
    // A value heard badly and denied is a failed attempt at the step: bounded by its max_attempts.
    if (pending.heard !== undefined) return t.reprompt(step, t.msg.correction);
    t.say(t.msg.correction);
    t.ask(step);
    t.offerKeypad(step);
    return 'confirm';
  }
  const faq = matchFaq(t.norm, t.agent.def.faq);
  if (faq) {
    t.say(faq.faq.answer, { intent_key: faq.faq.intent, source: 'faq' });
    for (const c of t.pendingClips(step, pending)) {
      t.clips.push({ ...c, flags: { ...c.flags, intent_key: faq.faq.intent, source: 'reprompt' } });
    }
    return 'faq';
  }
  pending.attempts += 1;
  if (pending.attempts >= step.max_attempts) {
    // No clear yes after the step's attempts: the value is dropped and the step asked again (or its fallback).
    t.state.confirm = null;
    delete t.state.slots[slot];
    t.trace.push({ layer: 'confirm', result: 'miss', detail: 'dropped', slot });
    return t.reprompt(step);
  }
  t.say(t.msg.not_understood);
  t.clips.push(...t.pendingClips(step, pending));
  return 'reprompt';
}

/**
 * Readbacks (docs/agents.md "Confirm modes"): a captured value said back for the caller to confirm — as one
 * sentence ("That is Friday, the 14th of November, right?") or digit by digit from the
 * pre-synthesised digit clips, followed by the confirm prompt.
 */
import type { Capture, SlotValue } from '../domain/agent.js';
import type { EngineMessages } from './messages.js';
import { digitWord, speakAmount, speakDate, speakTime } from './spoken.js';
import type { ClipSpec } from './state.js';
import { renderTemplate } from './template.js';

/** How a canonical value reads in a sentence, in `language`. */
function displayValue(capture: Capture, value: SlotValue, language: string): string {
  switch (capture.type) {
    case 'date':
      return speakDate(String(value), language);
    case 'time':
      return speakTime(String(value), language);
    case 'amount':
      return speakAmount(Number(value), language);
    case 'yes_no':
      return value ? 'yes' : 'no';
    case 'choice': {
      const option = capture.options?.find((o) => o.id === value);
      return option?.synonyms[0] ?? String(value).replace(/_/g, ' ');
    }
    default:
      return String(value);
  }
}

/**
 * The readback clips for `value`: digit clips + confirm prompt (`digits`), or one readback
 * sentence: `readback` ("That is …, right?") or `heard` (the `heard_readback` line, for a value
 * heard below its confidence threshold: "I heard …. Is that right?").
 */
export function readbackClips(
  mode: 'readback' | 'digits' | 'heard',
  capture: Capture,
  value: SlotValue,
  language: string,
  messages: EngineMessages,
): ClipSpec[] {
  if (mode === 'digits') {
    const clips: ClipSpec[] = [...String(value)].map((d) => ({
      text: d,
      speak: digitWord(d, language),
      flags: { is_digit: true },
    }));
    clips.push({ text: messages.confirm_prompt, flags: { is_confirm_prompt: true } });
    return clips;
  }
  const text = renderTemplate(mode === 'heard' ? messages.heard_readback : messages.readback, {
    extra: { value: displayValue(capture, value, language) },
  });
  return [{ text, flags: { is_readback: true } }];
}

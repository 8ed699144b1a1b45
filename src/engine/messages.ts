/**
 * The engine's default lines per language (docs/agents.md "Messages"): what the agent says for control
 * intents, re-prompts, readbacks and goodbyes when the agent's `messages` do not override them.
 */
import { baseLanguage, type AgentDefinition, type Messages } from '../domain/agent.js';

/** Every engine line, resolved for one agent. `readback` and `heard_readback` hold a `{{value}}` placeholder. */
export type EngineMessages = Required<Messages>;

const DEFAULTS: Record<string, EngineMessages> = {
  en: {
    repeat_prefix: 'Sure, I said:',
    wait: 'Sure, take your time. I am here.',
    human: 'I will ask a member of our team to call you back.',
    not_understood: 'Sorry, I did not catch that.',
    confirm_prompt: 'Is that correct?',
    readback: 'That is {{value}}, right?',
    heard_readback: 'I heard {{value}}. Is that right?',
    correction: 'Sorry about that. Could you tell me again?',
    goodbye: 'Thank you. Goodbye!',
    fillers: ['Okay.', 'Got it.', 'Thank you.'],
    no_input: 'Are you still there?',
    no_input_goodbye: 'I am sorry, I cannot hear you, so I will end this call now. Goodbye!',
    time_up: 'I am sorry, we have run out of time on this call.',
    keypad_offer: "Or type it on your phone's keypad and press hash.",
  },
  hi: {
    repeat_prefix: 'जी, मैंने कहा:',
    wait: 'जी, आराम से। मैं लाइन पर हूँ।',
    human: 'मैं हमारी टीम के किसी सदस्य से आपको कॉल करवाती हूँ।',
    not_understood: 'माफ़ कीजिए, मैं समझ नहीं पाई।',
    confirm_prompt: 'क्या यह सही है?',
    readback: '{{value}}, सही है?',
    heard_readback: 'मैंने सुना: {{value}}। क्या यह सही है?',
    correction: 'माफ़ कीजिए। कृपया फिर से बताइए।',
    goodbye: 'धन्यवाद। नमस्ते!',
    fillers: ['ठीक है।', 'जी।', 'धन्यवाद।'],
    no_input: 'क्या आप लाइन पर हैं?',
    no_input_goodbye: 'माफ़ कीजिए, मुझे आपकी आवाज़ नहीं आ रही, इसलिए मैं यह कॉल समाप्त कर रही हूँ। नमस्ते!',
    time_up: 'माफ़ कीजिए, इस कॉल का समय पूरा हो गया है।',
    keypad_offer: 'या अपने फ़ोन के कीपैड पर टाइप करके हैश दबाइए।',
  },
};

/**
 * The agent's lines: its own `messages` over the defaults of its language (English when the
 * language has no defaults).
 */
export function messagesFor(agent: Pick<AgentDefinition, 'language' | 'messages'>): EngineMessages {
  const base = DEFAULTS[baseLanguage(agent.language)] ?? DEFAULTS.en!;
  return { ...base, ...stripUndefined(agent.messages) };
}

function stripUndefined(m: Messages): Partial<EngineMessages> {
  const out: Partial<EngineMessages> = {};
  for (const [k, v] of Object.entries(m)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/**
 * A turn's model step (docs/llm.md "Where the model acts"), in the prepare phase of a turn,
 * before its write step: when the engine asks (`TurnOutput.llm`) and the agent has an `llm`
 * block, the per-session cap and the tenant's budget are checked (with the call's worst cost),
 * the messages built, the model called under one deadline, and its output checked. Whatever
 * happens, the step answers with an {@link LlmAssist} the engine runs the turn again with: the
 * model's answer, or `none` with the reason, so the rules' path stands. It never throws and
 * never waits past its deadline.
 */
import type { AgentDefinition } from '../domain/agent.js';
import type { Pricing } from '../config/pricing.js';
import { INTENT_SCHEMA, LLM_INTENTS, slotSchema, type LlmAsk, type LlmAssist } from '../engine/llm-assist.js';
import {
  LanguageModelError,
  type ChatMessage,
  type Completion,
  type CompletionRequest,
  type LanguageModel,
  type TokenUsage,
} from './language-model.js';
import type { CompiledAgent, EngineState } from '../engine/state.js';

/** What the model step reads of a session (a `LiveSession`, src/app/session-types.ts). */
export interface LlmSessionView {
  tenantId: string;
  agent: CompiledAgent;
  state: EngineState;
  /** The session's reference time, epoch ms (today's date for a date slot). */
  refMs: number;
  metrics: { llm_calls: number };
}

/** What the session service calls the model with. */
export interface LlmStepOptions {
  /** The model port (`NoLanguageModel` when none is configured). */
  model: LanguageModel;
  /** The tenant budget check before a call: true when `extraMicro` more may be spent today. */
  budget: { allows(tenantId: string, extraMicro: number): boolean };
  /** Deadline of the whole model step, ms (default {@link DEFAULT_LLM_DEADLINE_MS}). */
  deadlineMs?: number;
  /** Told of each request that failed (the turn then falls back to the rules), for the daemon's log. */
  onFailure?: (failure: LlmFailure) => void;
}

/**
 * A request to the model that failed: the model asked, the {@link LanguageModelError} kind
 * (`other` for anything else), the endpoint's HTTP status (null: it did not answer) and the
 * error's message (the adapter's: host, status, the provider's words, the key redacted).
 */
export interface LlmFailure {
  model: string;
  kind: string;
  status: number | null;
  message: string;
}

/** Default deadline of a turn's model step, ms. */
export const DEFAULT_LLM_DEADLINE_MS = 5000;

/** Longest reply the model may give, characters (about three spoken sentences); longer is `too_long`. */
export const MAX_REPLY_CHARS = 600;

/** One request sent to the model: its model, what it used and cost, and how long it took. */
export interface LlmCall {
  model: string;
  usage: TokenUsage;
  /** Wall time of the step, ms. */
  latencyMs: number;
  /** Cost, µ₹: `Pricing.llmMicro` with input = prompt − cached, cached apart, output. */
  costMicro: number;
}

/** What the model step gives the turn: the engine's answer, and the request sent (null: none was). */
export interface LlmStepResult {
  assist: LlmAssist;
  call: LlmCall | null;
}

/** Prompt tokens a request is reckoned at before it is sent: a character count over 3, rounded up, plus 4 per message. */
export function estimatePromptTokens(messages: ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += m.content.length;
  return Math.ceil(chars / 3) + 4 * messages.length;
}

/** The local calendar date of `ms` in `timezone`, `YYYY-MM-DD`. */
function dateIn(ms: number, timezone: string): string {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);
  } catch {
    return new Date(ms).toISOString().slice(0, 10);
  }
}

/**
 * The messages of a request: the system prompt (the agent's instructions and FAQ answers first,
 * the same on every request of the agent so a provider's prompt cache can serve them, then what
 * this request asks), the agent's last reply, the caller's utterance.
 */
export function buildMessages(s: LlmSessionView, ask: LlmAsk, utterance: string): ChatMessage[] {
  const def = s.agent.def;
  const llm = def.llm!;
  const facts = def.faq.map((f) => `- ${f.answer}`).join('\n');
  const base =
    `You are the voice agent "${def.name}" on a phone line, speaking ${def.language}.\n` +
    `${llm.instructions}\n` +
    (facts ? `Facts you may use:\n${facts}\n` : '');
  let task: string;
  if (ask.kind === 'reply') {
    task =
      `Answer the caller's question in one or two short sentences of plain spoken text (no lists, markdown or emoji), ` +
      `in the language the agent speaks, from the instructions and facts above only. If they do not answer it, say ` +
      `briefly that you do not know and the staff can help. Do not ask the caller anything: the agent's next question follows your answer.`;
  } else if (ask.kind === 'slot') {
    task =
      `The agent asked: "${ask.question}". Extract the ${ask.capture.type} value the caller gave for "${ask.capture.slot}" ` +
      `from the caller's last message. Today is ${dateIn(s.refMs, def.timezone)} (${def.timezone}). ` +
      `Reply with JSON only: {"value": the value, or null when the caller did not give one}.`;
  } else {
    task =
      `Decide whether the caller's last message asks to end the call (goodbye), to hear the agent's last words again ` +
      `(repeat), for a moment to hold on (wait), to speak to a person (human), or none of these (none). ` +
      `Reply with JSON only: {"intent": "goodbye" | "repeat" | "wait" | "human" | "none"}.`;
  }
  const messages: ChatMessage[] = [{ role: 'system', content: `${base}\n${task}` }];
  const last = s.state.last_clips.map((c) => c.text).join(' ');
  if (last) messages.push({ role: 'assistant', content: last });
  messages.push({ role: 'user', content: utterance });
  return messages;
}

/** The scripts a reply may be written in for an agent's language: Latin always (names, numbers, Hinglish), and the language's own. */
const SCRIPTS: Record<string, RegExp> = {
  hi: /\p{Script=Devanagari}/u,
  mr: /\p{Script=Devanagari}/u,
  ne: /\p{Script=Devanagari}/u,
  bn: /\p{Script=Bengali}/u,
  gu: /\p{Script=Gujarati}/u,
  pa: /\p{Script=Gurmukhi}/u,
  ta: /\p{Script=Tamil}/u,
  te: /\p{Script=Telugu}/u,
  kn: /\p{Script=Kannada}/u,
  ml: /\p{Script=Malayalam}/u,
  or: /\p{Script=Oriya}/u,
  ur: /\p{Script=Arabic}/u,
};

/**
 * True when `text` is written in another language's script than `language`'s: more than a fifth
 * of its letters are neither Latin nor the language's own script.
 */
export function otherScript(text: string, language: string): boolean {
  const own = SCRIPTS[language.split('-')[0]!.toLowerCase()];
  let letters = 0;
  let foreign = 0;
  for (const ch of text) {
    if (!/\p{L}/u.test(ch)) continue;
    letters++;
    if (!/\p{Script=Latin}/u.test(ch) && !(own?.test(ch) ?? false)) foreign++;
  }
  return letters > 0 && foreign * 5 > letters;
}

/** Parses a structured answer: the object, or null when it is not a JSON object (malformed or truncated). */
function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Checks a completion against what was asked: the engine's answer, or `none` with why it was refused. */
export function checkCompletion(ask: LlmAsk, done: Completion, def: AgentDefinition): LlmAssist {
  if (ask.kind === 'reply') {
    const text = done.text.replace(/\s+/g, ' ').trim();
    if (done.finishReason === 'length' || text.length > MAX_REPLY_CHARS) return { kind: 'none', detail: 'too_long' };
    if (text === '') return { kind: 'none', detail: 'empty' };
    if (otherScript(text, def.language)) return { kind: 'none', detail: 'other_language' };
    return { kind: 'reply', text };
  }
  const obj = done.finishReason === 'length' ? null : parseObject(done.text.trim());
  if (obj === null) return { kind: 'none', detail: 'malformed' };
  if (ask.kind === 'intent') {
    const intent = obj.intent;
    if (intent === 'none' || (LLM_INTENTS as readonly unknown[]).includes(intent))
      return { kind: 'intent', intent: intent as (typeof LLM_INTENTS)[number] | 'none' };
    return { kind: 'none', detail: 'malformed' };
  }
  if (!('value' in obj)) return { kind: 'none', detail: 'malformed' };
  const v = obj.value;
  if (v === null) return { kind: 'slot', value: null };
  if (typeof v === 'boolean' || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) return { kind: 'slot', value: v };
  return { kind: 'none', detail: 'wrong_type' };
}

/** A promise that rejects with a `timeout` LanguageModelError after `ms` (and aborts `abort`). */
function deadline(ms: number, abort: AbortController): { promise: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Settled before the abort, so the race ends as a timeout and not as the request's abort.
      reject(new LanguageModelError('timeout', `the model step passed its deadline of ${ms} ms`));
      abort.abort();
    }, ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
}

/**
 * Runs a turn's model step for `ask` (see the module comment). `onDelta` hears a streamed reply's
 * text as it arrives (a phone call may start speaking it).
 * @returns the engine's answer and the request sent; never throws.
 */
export async function runLlmStep(
  opts: LlmStepOptions,
  pricing: Pricing,
  s: LlmSessionView,
  ask: LlmAsk,
  utterance: string,
  onDelta: (text: string) => void = () => {},
): Promise<LlmStepResult> {
  const llm = s.agent.def.llm;
  const lm = opts.model;
  const model = llm?.model ?? lm.defaultModel;
  if (!llm || !lm.configured || model === null) return { assist: { kind: 'none', detail: 'not_configured' }, call: null };
  if (s.metrics.llm_calls >= llm.max_calls_per_session) return { assist: { kind: 'none', detail: 'session_cap' }, call: null };
  const messages = buildMessages(s, ask, utterance);
  const worst = pricing.llmMicro(model, { input: estimatePromptTokens(messages), output: llm.max_output_tokens, cached: 0 });
  if (!opts.budget.allows(s.tenantId, worst)) return { assist: { kind: 'none', detail: 'budget' }, call: null };

  const ms = opts.deadlineMs ?? DEFAULT_LLM_DEADLINE_MS;
  const abort = new AbortController();
  const request: CompletionRequest = {
    model,
    messages,
    maxOutputTokens: llm.max_output_tokens,
    timeoutMs: ms,
    signal: abort.signal,
    ...(llm.temperature !== undefined ? { temperature: llm.temperature } : {}),
    ...(ask.kind === 'slot' ? { jsonSchema: slotSchema(ask.capture) } : ask.kind === 'intent' ? { jsonSchema: INTENT_SCHEMA } : {}),
  };
  const started = performance.now();
  const limit = deadline(ms, abort);
  const none: TokenUsage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  try {
    const sent = ask.kind === 'reply' ? lm.stream(request, onDelta) : lm.complete(request);
    sent.catch(() => undefined); // settled after the deadline: nothing waits for it
    const done = await Promise.race([sent, limit.promise]);
    const usage = sanitizeUsage(done.usage);
    const call: LlmCall = { model, usage, latencyMs: performance.now() - started, costMicro: costOf(pricing, model, usage) };
    return { assist: checkCompletion(ask, done, s.agent.def), call };
  } catch (err) {
    const detail = err instanceof LanguageModelError ? err.kind : 'other';
    const status = err instanceof LanguageModelError ? err.status : null;
    try {
      opts.onFailure?.({ model, kind: detail, status, message: err instanceof Error ? err.message : String(err) });
    } catch {
      // a failing log never fails the turn
    }
    return {
      assist: { kind: 'none', detail, ...(status !== null ? { status } : {}) },
      call: { model, usage: none, latencyMs: performance.now() - started, costMicro: 0 },
    };
  } finally {
    limit.clear();
  }
}

/** Token counts as whole non-negative numbers, cached at most the prompt (a provider's odd report is not trusted further). */
function sanitizeUsage(u: TokenUsage): TokenUsage {
  const whole = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);
  const promptTokens = whole(u?.promptTokens);
  return { promptTokens, completionTokens: whole(u?.completionTokens), cachedTokens: Math.min(whole(u?.cachedTokens), promptTokens) };
}

/** The cost of `usage` on `model`, µ₹: prompt tokens not cached as input, cached apart, completion as output. */
export function costOf(pricing: Pricing, model: string, usage: TokenUsage): number {
  return pricing.llmMicro(model, {
    input: usage.promptTokens - usage.cachedTokens,
    cached: usage.cachedTokens,
    output: usage.completionTokens,
  });
}

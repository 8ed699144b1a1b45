/**
 * What an agent needs from the session it runs in (docs/agents.md "Context: what a session must bring"):
 * the context keys it declares in `required_context`, `customer_name` when a prompt says
 * `{{customer_name}}`, and the defaults of `context_defaults` for the other `{{context.x}}`.
 *
 * A session never opens without what its agent needs, so no prompt is spoken with a blank
 * where a name or an amount belongs; `vagent agent apply` warns about `{{context.x}}` that is
 * neither required nor defaulted ({@link contextWarnings}). Pure: no I/O.
 */
import type { AgentDefinition } from '../domain/agent.js';
import { placeholderNames } from './template.js';

/** A field path as the agent schema reports it: `['steps', 2, 'ask']`. */
export type TextPath = (string | number)[];

/** One text of an agent that may hold placeholders, and where it is in the definition. */
export interface AgentText {
  path: TextPath;
  text: string;
}

/** The values a session opens with (a `POST /v1/sessions` or `POST /v1/calls` body). */
export interface SessionValues {
  customer_name?: string | null;
  context: Record<string, unknown>;
}

/** Why a value an agent needs does not do: absent (or null), blank text, or not speakable. */
export type MissingReason = 'missing' | 'empty' | 'not_text';

/** A value an agent needs that the session lacks: `context.emi_amount` or `customer_name`. */
export interface MissingValue {
  /** The request field: `context.<key>` or `customer_name`. */
  param: string;
  reason: MissingReason;
}

/** A `{{context.x}}` an agent speaks without requiring it or giving it a default. */
export interface ContextWarning {
  /** The text holding it (`steps[1].ask`), for locating it in the agent file. */
  path: TextPath;
  message: string;
}

/**
 * Every text of the agent that is rendered as a template: opening lines, asks, re-prompts,
 * fallbacks, stop lines, FAQ answers, the closing line and the message overrides.
 */
export function agentTexts(def: AgentDefinition): AgentText[] {
  const out: AgentText[] = [];
  def.opening.forEach((o, i) => out.push({ path: ['opening', i, 'text'], text: o.text }));
  def.steps.forEach((s, i) => {
    out.push({ path: ['steps', i, 'ask'], text: s.ask });
    if (s.reprompt) out.push({ path: ['steps', i, 'reprompt'], text: s.reprompt });
    if (s.fallback) out.push({ path: ['steps', i, 'fallback'], text: s.fallback });
    if (s.stop_if) out.push({ path: ['steps', i, 'stop_if', 'say'], text: s.stop_if.say });
  });
  def.faq.forEach((f, i) => out.push({ path: ['faq', i, 'answer'], text: f.answer }));
  out.push({ path: ['closing'], text: def.closing });
  for (const [name, value] of Object.entries(def.messages ?? {})) {
    if (typeof value === 'string') out.push({ path: ['messages', name], text: value });
    else if (Array.isArray(value)) value.forEach((t, i) => out.push({ path: ['messages', name, i], text: t }));
  }
  return out;
}

/** True when a prompt of the agent says `{{customer_name}}`. */
export function usesCustomerName(def: AgentDefinition): boolean {
  return agentTexts(def).some((t) => placeholderNames(t.text).includes('customer_name'));
}

/** The value at a dotted `key` of `context` (`order.id` → `context.order.id`), or undefined. */
export function contextValue(context: Record<string, unknown>, key: string): unknown {
  let cur: unknown = context;
  for (const part of key.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Why `value` cannot be spoken in a prompt, or null when it can (non-blank text, a finite number, a boolean). */
function unspeakable(value: unknown): MissingReason | null {
  if (value === undefined || value === null) return 'missing';
  if (typeof value === 'string') return value.trim() === '' ? 'empty' : null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'not_text';
  if (typeof value === 'boolean') return null;
  return 'not_text';
}

/**
 * The values `def` needs that `values` lacks, in order: `required_context` as declared, then
 * `customer_name` when a prompt says it. Empty when the session may open.
 */
export function missingSessionValues(def: AgentDefinition, values: SessionValues): MissingValue[] {
  const out: MissingValue[] = [];
  for (const key of def.required_context ?? []) {
    const reason = unspeakable(contextValue(values.context, key));
    if (reason) out.push({ param: `context.${key}`, reason });
  }
  if (usesCustomerName(def)) {
    const reason = unspeakable(values.customer_name);
    if (reason) out.push({ param: 'customer_name', reason });
  }
  return out;
}

/**
 * `context` with the agent's `context_defaults` filled in where a key is absent, null or blank
 * (a dotted key creates the objects on its path; a path through a non-object is left alone).
 * The input is not changed; without defaults it is returned as is.
 */
export function withContextDefaults(def: AgentDefinition, context: Record<string, unknown>): Record<string, unknown> {
  const defaults = Object.entries(def.context_defaults ?? {});
  if (defaults.length === 0) return context;
  const out = structuredClone(context);
  for (const [key, value] of defaults) {
    if (unspeakable(contextValue(out, key)) === null) continue;
    const parts = key.split('.');
    let cur: Record<string, unknown> = out;
    let reachable = true;
    for (const part of parts.slice(0, -1)) {
      const next = cur[part];
      if (next === undefined || next === null) cur[part] = {};
      else if (typeof next !== 'object' || Array.isArray(next)) {
        reachable = false;
        break;
      }
      cur = cur[part] as Record<string, unknown>;
    }
    if (reachable) cur[parts[parts.length - 1]!] = value;
  }
  return out;
}

/** Keys an inbound call brings in its context (app/inbound.ts): `call.direction`, `call.to`, `call.from`. */
const INBOUND_CONTEXT = new Set(['call', 'call.direction', 'call.to', 'call.from']);

/**
 * What `vagent agent apply` warns about (it does not refuse the agent):
 * - each `{{context.x}}` in a prompt whose key is neither in `required_context` nor in
 *   `context_defaults` (a session opened without it would speak a blank), once per text;
 * - an inbound agent that needs `customer_name` or context an inbound call does not bring
 *   (such a call could not open a session).
 */
export function contextWarnings(def: AgentDefinition): ContextWarning[] {
  const required = new Set(def.required_context ?? []);
  const defaulted = new Set(Object.keys(def.context_defaults ?? {}));
  const out: ContextWarning[] = [];
  for (const t of agentTexts(def)) {
    const seen = new Set<string>();
    for (const name of placeholderNames(t.text)) {
      if (!name.startsWith('context.')) continue;
      const key = name.slice('context.'.length);
      if (required.has(key) || defaulted.has(key) || seen.has(key)) continue;
      seen.add(key);
      out.push({
        path: t.path,
        message: `{{context.${key}}} is neither in required_context nor in context_defaults: a session opened without it speaks a blank here (add "${key}" to required_context, or give it a default in context_defaults)`,
      });
    }
  }
  if (def.direction === 'inbound') {
    const needs = [...required].filter((k) => !INBOUND_CONTEXT.has(k)).map((k) => `context.${k}`);
    if (usesCustomerName(def)) needs.push('customer_name');
    if (needs.length > 0) {
      out.push({
        path: ['direction'],
        message: `an inbound call brings no ${needs.join(', ')}: a call on a number bound to this agent could not open a session (only sessions opened with them can)`,
      });
    }
  }
  return out;
}

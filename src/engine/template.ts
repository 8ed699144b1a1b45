/**
 * Prompt templates (docs/agents.md "Templates"): `{{customer_name}}`, `{{context.x}}` (nested with dots) and

 * `{{slot_name}}` for captured slots. A placeholder with no value renders as an empty string,
 * and the whitespace around it is tidied, so a missing name never reads as "Hello {{…}}".
 * Sessions do not open without the values an agent needs (see context-needs.ts), so a blank
 * here is a `{{context.x}}` the agent declared neither required nor defaulted.
 */

const PLACEHOLDER = /\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*(?:\.[a-zA-Z0-9_]+)*)\s*\}\}/g;

/** The values a template may use. */
export interface TemplateVars {
  customer_name?: string | null;
  context?: Record<string, unknown>;
  slots?: Record<string, unknown>;
  /** Extra names (e.g. `value` in a readback line). */
  extra?: Record<string, string>;
}

/** The names of the placeholders of `text` in order, repeats kept (`customer_name`, `context.emi_amount`). */
export function placeholderNames(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

/** True when `text` has at least one placeholder. */
export function isTemplate(text: string): boolean {
  PLACEHOLDER.lastIndex = 0;
  return PLACEHOLDER.test(text);
}

/** True when every placeholder of `text` is `customer_name` or `context.*` (known at session open). */
export function usesOnlySessionVars(text: string): boolean {
  for (const m of text.matchAll(PLACEHOLDER)) {
    const name = m[1]!;
    if (name !== 'customer_name' && !name.startsWith('context.')) return false;
  }
  return true;
}

function lookup(name: string, vars: TemplateVars): unknown {
  if (vars.extra && name in vars.extra) return vars.extra[name];
  if (name === 'customer_name') return vars.customer_name ?? undefined;
  if (name.startsWith('context.')) {
    let cur: unknown = vars.context;
    for (const part of name.slice('context.'.length).split('.')) {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = (cur as Record<string, unknown>)[part];
    }
    return cur;
  }
  return vars.slots?.[name];
}

function show(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

/** Renders `text` with `vars`; unknown placeholders become empty and spacing is tidied. */
export function renderTemplate(text: string, vars: TemplateVars): string {
  if (!text.includes('{{')) return text;
  return text
    .replace(PLACEHOLDER, (_m, name: string) => show(lookup(name, vars)))
    .replace(/\s+([,.!?।])/g, '$1')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

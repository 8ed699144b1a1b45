/**
 * The values a session is opened with: its reference time and the context its prompts speak
 * (docs/agents.md "Context").
 */
import type { AgentDefinition } from '../domain/agent.js';
import { ApiError } from '../domain/errors.js';
import { isoTimeMs } from '../domain/time.js';
import { missingSessionValues, type MissingValue } from '../engine/context-needs.js';

/**
 * The reference time of a session: `context.now` (ISO 8601) when given, else `fallbackMs`.
 * @throws ApiError invalid_request when `context.now` is present but not a valid time.
 */
export function referenceTime(context: Record<string, unknown>, fallbackMs: number): number {
  const now = context.now;
  if (now === undefined || now === null) return fallbackMs;
  const ms = isoTimeMs(now);
  if (ms === null)
    throw new ApiError('invalid_request', 'context.now must be an ISO 8601 time such as 2026-11-21T10:30:00+05:30', {
      param: 'context.now',
    });
  return ms;
}

const REASONS: Record<MissingValue['reason'], string> = { missing: '', empty: ' (empty)', not_text: ' (not text or a number)' };

/**
 * Refuses to open a session of `def` without the values its prompts speak (docs/agents.md
 * "Context"): every `required_context` key and, when a prompt says
 * `{{customer_name}}`, `customer_name` — each a non-blank string, a number or a boolean.
 * @throws ApiError invalid_request naming every missing value; `param` is the first
 *         (`context.<key>` or `customer_name`).
 */
export function requireSessionValues(
  def: AgentDefinition,
  values: { customer_name: string | null; context: Record<string, unknown> },
): void {
  const missing = missingSessionValues(def, values);
  if (missing.length === 0) return;
  const names = missing.map((m) => `${m.param}${REASONS[m.reason]}`);
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
  throw new ApiError(
    'invalid_request',
    `agent ${def.id} needs ${list}: its prompts speak ${missing.length === 1 ? 'it' : 'them'}, so the session was not opened; pass ${missing.length === 1 ? 'it' : 'them'} in the request (context is a JSON object)`,
    { param: missing[0]!.param },
  );
}

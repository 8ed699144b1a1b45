/**
 * The fake model server's scripted replies (./fake-llm.ts): a list of rules, the first whose
 * `match` fits the last user message answering. Read from a YAML or JSON file
 * (`npm run fake-llm -- --rules FILE`), passed by tests, or put to `/control/rules`.
 */

/** One scripted reply, as written in a rules file. */
export interface FakeLlmRule {
  /** A regular expression (case-insensitive) on the last user message; absent: every request. */
  match?: string;
  /** The reply text (or, with `status`, the error message). */
  reply?: string;
  /** A JSON value replied as its JSON text (structured answers). */
  json?: unknown;
  /** Wait before answering, ms. */
  delay_ms?: number;
  /** Wait between streamed chunks, ms. */
  chunk_delay_ms?: number;
  /** Answer this HTTP status with an OpenAI error body instead (429, 500 …). */
  status?: number;
  /** With `status`: the `retry-after-ms` header sent (the `openai` client waits that long). */
  retry_after_ms?: number;
  /** `hang`: never answer; `malformed`: a body (or a chunk) that is not JSON; `cut`: the connection closes mid-answer. */
  mode?: 'hang' | 'malformed' | 'cut';
  /** How many requests the rule answers before it stops matching; absent: all. */
  times?: number;
}

/** A checked rule, its regex compiled and its uses counted down (-1: unlimited). */
export interface ParsedRule extends Omit<FakeLlmRule, 'match' | 'times'> {
  match: RegExp | null;
  remaining: number;
}

const KEYS = new Set(['match', 'reply', 'json', 'delay_ms', 'chunk_delay_ms', 'status', 'retry_after_ms', 'mode', 'times']);

function whole(v: unknown, what: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`${what} must be a whole number from ${min} to ${max}`);
  }
  return v;
}

/**
 * Checks and compiles `rules`.
 * @throws RangeError naming the rule (by index) and the field that is wrong
 */
export function parseRules(rules: unknown): ParsedRule[] {
  if (!Array.isArray(rules)) throw new RangeError('rules must be a list');
  return rules.map((raw, i) => {
    const at = `rule ${i}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new RangeError(`${at} must be a mapping`);
    const r = raw as Record<string, unknown>;
    for (const k of Object.keys(r)) if (!KEYS.has(k)) throw new RangeError(`${at}: unknown field ${k}`);
    let match: RegExp | null = null;
    if (r['match'] !== undefined) {
      if (typeof r['match'] !== 'string') throw new RangeError(`${at}: match must be a regular expression as text`);
      try {
        match = new RegExp(r['match'], 'i');
      } catch (err) {
        throw new RangeError(`${at}: match is not a regular expression: ${(err as Error).message}`);
      }
    }
    if (r['reply'] !== undefined && typeof r['reply'] !== 'string') throw new RangeError(`${at}: reply must be text`);
    if (r['mode'] !== undefined && !['hang', 'malformed', 'cut'].includes(r['mode'] as string)) {
      throw new RangeError(`${at}: mode must be hang, malformed or cut`);
    }
    const status = whole(r['status'], `${at}: status`, 200, 599);
    const delay = whole(r['delay_ms'], `${at}: delay_ms`, 0, 600_000);
    const chunkDelay = whole(r['chunk_delay_ms'], `${at}: chunk_delay_ms`, 0, 60_000);
    const retryAfter = whole(r['retry_after_ms'], `${at}: retry_after_ms`, 0, 600_000);
    const times = whole(r['times'], `${at}: times`, 1, 1_000_000);
    return {
      match,
      remaining: times ?? -1,
      ...(typeof r['reply'] === 'string' ? { reply: r['reply'] } : {}),
      ...(r['json'] !== undefined ? { json: r['json'] } : {}),
      ...(delay !== undefined ? { delay_ms: delay } : {}),
      ...(chunkDelay !== undefined ? { chunk_delay_ms: chunkDelay } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(retryAfter !== undefined ? { retry_after_ms: retryAfter } : {}),
      ...(r['mode'] !== undefined ? { mode: r['mode'] as FakeLlmRule['mode'] } : {}),
    };
  });
}

/**
 * Token counts of a chat completion as OpenAI-compatible servers report them (docs/llm.md "Wire
 * formats"): OpenAI, vLLM, Groq and Sarvam put them in `usage` (`prompt_tokens`,
 * `completion_tokens`, cached prompt tokens in `usage.prompt_tokens_details.cached_tokens`);
 * llama.cpp's server adds `timings` (`cache_n` prompt tokens reused from its cache, `prompt_n`
 * prompt tokens processed, `predicted_n` tokens generated); Groq's older streams carried usage in
 * `x_groq.usage`. A streamed answer may carry them on any chunk, usually the last ones.
 */
import type { TokenUsage } from '../../app/language-model.js';

/** A whole number ≥ 0, or undefined for anything else (a provider's missing or odd field). */
function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** What one response object (a completion, or one streamed chunk) says about tokens. */
export interface UsageParts {
  /** `usage` (or Groq's `x_groq.usage`), when present. */
  usage?: Record<string, unknown>;
  /** llama.cpp's `timings`, when present. */
  timings?: Record<string, unknown>;
}

/** The token fields of `body` (a completion or a chunk); later chunks' parts replace earlier ones. */
export function usagePartsOf(body: unknown, into: UsageParts = {}): UsageParts {
  const b = record(body);
  if (!b) return into;
  const usage = record(b['usage']) ?? record(record(b['x_groq'])?.['usage']);
  const timings = record(b['timings']);
  if (usage) into.usage = usage;
  if (timings) into.timings = timings;
  return into;
}

/**
 * The {@link TokenUsage} of the parts gathered. llama.cpp's `timings`, when present, are taken
 * over `usage` for the prompt (`cache_n + prompt_n`) and the cached part (`cache_n`): its server
 * may send `usage.prompt_tokens_details.cached_tokens: 0` beside a non-zero `cache_n`
 * (tools/server/README.md of llama.cpp, "Timings and context usage"). Otherwise `usage`
 * (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`); 0 for what
 * neither reports. Cached tokens never exceed the prompt's.
 */
export function tokenUsage(parts: UsageParts): TokenUsage {
  const u = parts.usage ?? {};
  const t = parts.timings ?? {};
  const cacheN = count(t['cache_n']);
  const promptN = count(t['prompt_n']);
  const fromTimings = cacheN !== undefined && promptN !== undefined ? cacheN + promptN : undefined;
  const promptTokens = fromTimings ?? count(u['prompt_tokens']) ?? 0;
  const completionTokens = count(u['completion_tokens']) ?? count(t['predicted_n']) ?? 0;
  const cached = cacheN ?? count(record(u['prompt_tokens_details'])?.['cached_tokens']) ?? 0;
  return { promptTokens, completionTokens, cachedTokens: Math.min(cached, promptTokens) };
}

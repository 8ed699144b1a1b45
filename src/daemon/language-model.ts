/**
 * The daemon's language model (docs/llm.md): the OpenAI-compatible chat-completions adapter when
 * `llm.base_url` is set, else {@link NoLanguageModel} (no agent's `llm` block is used). The
 * adapter and the `openai` client are loaded only then, as LiveKit's SDK is: a daemon without a
 * model does not pay for loading them at start.
 */
import type { Settings } from '../config/schema.js';
import { NoLanguageModel, type LanguageModel } from '../app/language-model.js';
import type { LlmFailure } from '../app/llm-step.js';

/** The language model of a daemon with these `llm` settings. */
export async function openLanguageModel(llm: Settings['llm']): Promise<LanguageModel> {
  if (!llm.base_url) return new NoLanguageModel();
  const { OpenAIChatModel } = await import('../adapters/llm/openai-chat.js');
  return new OpenAIChatModel({
    baseURL: llm.base_url,
    model: llm.model ?? null,
    apiKey: llm.api_key,
    maxRetries: llm.max_retries,
  });
}

/** How long repeats of one kind of model failure are counted rather than logged, ms. */
export const LLM_FAILURE_LOG_WINDOW_MS = 60_000;

/** Where {@link llmFailureLog} writes: a pino-like `warn(fields, message)`. */
export interface WarnLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * The daemon's log of failed model requests (docs/llm.md "Failures"): one warn line per failure
 * with its kind, the endpoint's host, the HTTP status, the model and the adapter's message (which
 * names no key; the key is taken out again here should a provider echo it). Repeats of one kind
 * within {@link LLM_FAILURE_LOG_WINDOW_MS} of the last line logged for it are counted, not
 * logged, so a dead endpoint does not flood the log; the next line of that kind says how many
 * were left out (`suppressed`).
 * @param llm the daemon's `llm` settings (host and key)
 * @param nowMs the clock (tests)
 */
export function llmFailureLog(
  log: WarnLog,
  llm: Settings['llm'],
  nowMs: () => number = Date.now,
  windowMs: number = LLM_FAILURE_LOG_WINDOW_MS,
): (failure: LlmFailure) => void {
  let host = 'the configured endpoint';
  try {
    if (llm.base_url) host = new URL(llm.base_url).host;
  } catch {
    // an unparsable URL is refused at load; keep the placeholder
  }
  const key = llm.api_key ?? null;
  const seen = new Map<string, { at: number; suppressed: number }>();
  return (f) => {
    const now = nowMs();
    const last = seen.get(f.kind);
    if (last && now - last.at < windowMs) {
      last.suppressed += 1;
      return;
    }
    const suppressed = last?.suppressed ?? 0;
    seen.set(f.kind, { at: now, suppressed: 0 });
    const message = key ? f.message.split(key).join('[redacted]') : f.message;
    log.warn(
      { component: 'llm', kind: f.kind, host, status: f.status, model: f.model, ...(suppressed > 0 ? { suppressed } : {}) },
      `language model request failed, the turn fell back to the rules: ${message}` +
        (suppressed > 0 ? ` (${suppressed} more ${f.kind} failure${suppressed === 1 ? '' : 's'} not logged since the last line)` : ''),
    );
  };
}

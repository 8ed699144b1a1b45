/**
 * The daemon's language model (docs/llm.md): the OpenAI-compatible chat-completions adapter when
 * `llm.base_url` is set, else {@link NoLanguageModel} (no agent's `llm` block is used). The
 * adapter and the `openai` client are loaded only then, as LiveKit's SDK is: a daemon without a
 * model does not pay for loading them at start.
 */
import type { Settings } from '../config/schema.js';
import { NoLanguageModel, type LanguageModel } from '../app/language-model.js';

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

/**
 * The daemon's language model (docs/llm.md): the OpenAI-compatible chat-completions adapter when
 * `llm.base_url` is set, else {@link NoLanguageModel} (no agent's `llm` block is used).
 */
import type { Settings } from '../config/schema.js';
import { NoLanguageModel, type LanguageModel } from '../app/language-model.js';
import { OpenAIChatModel } from '../adapters/llm/openai-chat.js';

/** The language model of a daemon with these `llm` settings. */
export function openLanguageModel(llm: Settings['llm']): LanguageModel {
  if (!llm.base_url) return new NoLanguageModel();
  return new OpenAIChatModel({
    baseURL: llm.base_url,
    model: llm.model ?? null,
    apiKey: llm.api_key,
    maxRetries: llm.max_retries,
  });
}

/**
 * What the session service needs from a language model (docs/llm.md): one chat completion, plain
 * or streamed, or a structured answer held to a JSON schema. The daemon passes the
 * OpenAI-compatible chat-completions adapter (`src/adapters/llm/`) when `llm.base_url` is set;
 * without one, {@link NoLanguageModel} refuses every request and an agent's `llm` block is never
 * used. Every failure is a {@link LanguageModelError}: the turn then falls back to the rules'
 * path, so a turn never hangs or fails because of the model.
 */

/** One message of a chat completion (OpenAI chat-completions `messages[]`). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * Tokens one completion used, as the provider reported them. `promptTokens` counts every prompt
 * token, `cachedTokens` the part of them served from the provider's prompt cache (OpenAI
 * `usage.prompt_tokens_details.cached_tokens`, llama.cpp `timings.cache_n`; 0 when not reported).
 * Priced as `promptTokens - cachedTokens` input tokens plus `cachedTokens` cached tokens plus
 * `completionTokens` output tokens (`Pricing.llmMicro`, config/pricing.yaml).
 */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** One request to the model. */
export interface CompletionRequest {
  /** The model name sent to the endpoint (and the key of its price in config/pricing.yaml). */
  model: string;
  messages: ChatMessage[];
  /** Sampling temperature, 0..2; the provider's default when absent. */
  temperature?: number;
  /** Upper bound on completion tokens (`max_tokens`). */
  maxOutputTokens?: number;
  /**
   * Ask for JSON held to this JSON Schema (`response_format: {type: "json_schema"}`); the answer's
   * `text` is then the JSON text, still to be parsed and checked by the caller (a provider may
   * ignore the schema).
   */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  /** Whole-request deadline, ms; past it the request is aborted with kind `timeout`. */
  timeoutMs: number;
  /** Aborts the request (the call hung up, the daemon stops). */
  signal?: AbortSignal;
}

/** A finished completion. */
export interface Completion {
  /** The reply text (for `jsonSchema`, the JSON text). */
  text: string;
  /** Why the model stopped: `stop`, `length` (cut at `maxOutputTokens`), or what the provider said. */
  finishReason: string;
  usage: TokenUsage;
  /** Wall time of the request, ms, from send to the last byte. */
  latencyMs: number;
  /** Streamed requests: ms from send to the first content delta; else equal to `latencyMs`. */
  firstTokenMs: number;
}

/** Why a request failed; every kind is a fallback to the rules, none is retried by the caller. */
export type LanguageModelErrorKind =
  /** No model is configured. */
  | 'not_configured'
  /** The deadline passed. */
  | 'timeout'
  /** HTTP 429 after the adapter's own retries. */
  | 'rate_limited'
  /** HTTP 5xx after the adapter's own retries. */
  | 'server_error'
  /** Any other HTTP status (400, 401, 404 …): a setting is wrong. */
  | 'refused'
  /** The connection failed or broke. */
  | 'network'
  /** The answer was not a chat completion. */
  | 'malformed'
  /** `signal` aborted the request. */
  | 'aborted';

/** A failed request. The message never holds the API key. */
export class LanguageModelError extends Error {
  constructor(
    readonly kind: LanguageModelErrorKind,
    message: string,
    /** The HTTP status, when the endpoint answered. */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'LanguageModelError';
  }
}

/** A language model as the session service uses it. */
export interface LanguageModel {
  /** The model used when an agent's `llm` block names none (`llm.model`), or null. */
  readonly defaultModel: string | null;
  /** True when requests can be sent at all (an endpoint is configured). */
  readonly configured: boolean;
  /**
   * One completion, not streamed. @throws LanguageModelError on any failure.
   */
  complete(request: CompletionRequest): Promise<Completion>;
  /**
   * One completion, streamed: `onDelta` is called with each piece of text as it arrives (in
   * order; their concatenation is the final `text`). @throws LanguageModelError on any failure,
   * also after some deltas were delivered (the caller discards them).
   */
  stream(request: CompletionRequest, onDelta: (text: string) => void): Promise<Completion>;
}

/** No model configured: every request fails with kind `not_configured`. */
export class NoLanguageModel implements LanguageModel {
  readonly defaultModel = null;
  readonly configured = false;
  complete(): Promise<Completion> {
    return Promise.reject(new LanguageModelError('not_configured', 'no language model is configured (llm.base_url)'));
  }
  stream(): Promise<Completion> {
    return this.complete();
  }
}

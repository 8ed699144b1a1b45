/**
 * The language model port (src/app/language-model.ts) over any OpenAI-compatible
 * chat-completions endpoint (`POST {baseURL}/chat/completions`; OpenAI, vLLM, llama.cpp's server,
 * Ollama, Groq, Sarvam — docs/llm.md), through the official `openai` client.
 *
 * - Deadline: `timeoutMs` bounds the whole request, retries and back-off included; past it the
 *   request is aborted and fails with kind `timeout`. The caller's `signal` fails it with `aborted`.
 * - Retries: only the client's own, and only where safe — a 408/409/429/5xx answer or a failed
 *   connection *before* a response started, with its exponential back-off (0.5 s doubling, at
 *   most 8 s, honouring `retry-after`), at most `maxRetries` times. Nothing is retried once a
 *   stream has begun: deltas already delivered cannot be taken back.
 * - Streaming: `stream: true` with `stream_options: {include_usage: true}`, so the last chunk
 *   carries the usage (https://platform.openai.com/docs/api-reference/chat/create).
 * - Structured output: `jsonSchema` becomes `response_format: {type: "json_schema", json_schema:
 *   {name, schema, strict: true}}` (https://platform.openai.com/docs/guides/structured-outputs).
 * - The API key (env `VAGENT_LLM_API_KEY` only) is sent as `Authorization: Bearer`; it is never in
 *   an error message (errors.ts scrubs it from the provider's words), and the client's own logger
 *   is off, so it is in no log line either.
 *
 * Connections: Node's fetch (undici's global dispatcher) keeps connections to the endpoint alive
 * and reuses them, one pool per origin; one daemon talks to one endpoint, so that pooling fits and
 * no undici `Agent` of its own is needed.
 */
import OpenAI from 'openai';
import { LanguageModelError, type Completion, type CompletionRequest, type LanguageModel } from '../../app/language-model.js';
import { toLanguageModelError, type FailureContext } from './errors.js';
import { tokenUsage, usagePartsOf, type UsageParts } from './usage.js';

/**
 * Sent as the API key when none is set: local servers (llama.cpp, vLLM, Ollama) ignore it, and the
 * client refuses to build without one.
 */
export const PLACEHOLDER_API_KEY = 'no-key';

/** Options of {@link OpenAIChatModel}. */
export interface OpenAIChatModelOptions {
  /** The endpoint's base URL, ending before `/chat/completions` (e.g. `http://127.0.0.1:8080/v1`). */
  baseURL: string;
  /** The model requests use when an agent names none (`llm.model`); null for none. */
  model: string | null;
  /** The API key (env `VAGENT_LLM_API_KEY`); unset for local servers that need none. */
  apiKey?: string | undefined;
  /** Retries of a failed attempt before any byte of the answer (default 2). */
  maxRetries?: number;
}

/** The chat-completions request body, as the `openai` client types it. */
type Body = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;

/** The OpenAI-compatible chat-completions adapter of the language model port. */
export class OpenAIChatModel implements LanguageModel {
  readonly configured = true;
  readonly defaultModel: string | null;
  private readonly client: OpenAI;
  private readonly ctx: FailureContext;

  /** @throws TypeError when `baseURL` is not a URL. */
  constructor(options: OpenAIChatModelOptions) {
    const url = new URL(options.baseURL);
    const maxRetries = options.maxRetries ?? 2;
    this.defaultModel = options.model;
    this.ctx = { host: url.host, maxRetries, secret: options.apiKey ?? null };
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey ?? PLACEHOLDER_API_KEY,
      maxRetries,
      // Not read from OPENAI_* variables: the daemon's settings say everything the client sends.
      organization: null,
      project: null,
      logLevel: 'off',
    });
  }

  /** @throws LanguageModelError on any failure (a bad `timeoutMs` too: kind `refused`). */
  complete(request: CompletionRequest): Promise<Completion> {
    return this.withDeadline(request, async (signal, started) => {
      const body = await this.client.chat.completions.create(this.body(request), {
        signal,
        timeout: request.timeoutMs,
      });
      // What came back is checked, not trusted: a server may answer 200 with anything.
      const choices: unknown = (body as unknown as { choices?: unknown } | null)?.choices;
      const first = Array.isArray(choices)
        ? (choices[0] as { message?: { content?: unknown }; finish_reason?: unknown } | undefined)
        : undefined;
      if (typeof first !== 'object' || first === null) {
        throw new LanguageModelError('malformed', `the model endpoint ${this.ctx.host} answered with no chat completion`);
      }
      const text = first.message?.content ?? null;
      const finish = first.finish_reason;
      if (text !== null && typeof text !== 'string') {
        throw new LanguageModelError('malformed', `the model endpoint ${this.ctx.host} answered a message whose content is not text`);
      }
      const latencyMs = performance.now() - started;
      return {
        text: text ?? '',
        finishReason: typeof finish === 'string' ? finish : 'unknown',
        usage: tokenUsage(usagePartsOf(body)),
        latencyMs,
        firstTokenMs: latencyMs,
      };
    });
  }

  /** @throws LanguageModelError on any failure, also after deltas were delivered. */
  stream(request: CompletionRequest, onDelta: (text: string) => void): Promise<Completion> {
    return this.withDeadline(request, async (signal, started) => {
      const chunks = await this.client.chat.completions.create(
        { ...this.body(request), stream: true, stream_options: { include_usage: true } },
        { signal, timeout: request.timeoutMs },
      );
      let text = '';
      let finishReason: string | null = null;
      let firstTokenMs: number | null = null;
      let seen = 0;
      const parts: UsageParts = {};
      for await (const chunk of chunks) {
        seen += 1;
        usagePartsOf(chunk, parts);
        const choice = (chunk as { choices?: unknown }).choices;
        const first = Array.isArray(choice) ? (choice[0] as { delta?: { content?: unknown }; finish_reason?: unknown }) : undefined;
        const delta = first?.delta?.content;
        if (signal.aborted) break;
        if (typeof delta === 'string' && delta !== '') {
          firstTokenMs ??= performance.now() - started;
          text += delta;
          onDelta(delta);
        }
        if (typeof first?.finish_reason === 'string') finishReason = first.finish_reason;
      }
      // The client ends its iteration quietly when the request is aborted: say why here.
      if (signal.aborted) throw new LanguageModelError('aborted', `request to the model endpoint ${this.ctx.host} aborted`);
      if (seen === 0) {
        throw new LanguageModelError('malformed', `the model endpoint ${this.ctx.host} answered with no chat-completion stream`);
      }
      if (finishReason === null) {
        throw new LanguageModelError('network', `the stream from the model endpoint ${this.ctx.host} ended before the model finished`);
      }
      const latencyMs = performance.now() - started;
      return { text, finishReason, usage: tokenUsage(parts), latencyMs, firstTokenMs: firstTokenMs ?? latencyMs };
    });
  }

  /** The request body shared by both forms. */
  private body(request: CompletionRequest): Body {
    return {
      model: request.model,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
      ...(request.jsonSchema
        ? {
            response_format: {
              type: 'json_schema' as const,
              json_schema: { name: request.jsonSchema.name, schema: request.jsonSchema.schema, strict: true },
            },
          }
        : {}),
    };
  }

  /**
   * Runs `work` under the request's deadline and the caller's signal: whichever comes first aborts
   * the request (the client's back-off sleeps are not abortable, so the outcome is decided here,
   * not by the client noticing) and fails it with `timeout` or `aborted`; any other failure is
   * mapped by errors.ts.
   */
  private async withDeadline(
    request: CompletionRequest,
    work: (signal: AbortSignal, started: number) => Promise<Completion>,
  ): Promise<Completion> {
    if (request.model.trim() === '') {
      throw new LanguageModelError('not_configured', 'no model is named (llm.model, or the agent’s llm.model)');
    }
    if (!(request.timeoutMs > 0) || !Number.isFinite(request.timeoutMs)) {
      throw new LanguageModelError('refused', `the request's deadline must be a number of ms > 0; got ${request.timeoutMs}`);
    }
    const host = this.ctx.host;
    if (request.signal?.aborted) throw new LanguageModelError('aborted', `request to the model endpoint ${host} aborted`);
    const controller = new AbortController();
    let stop: (err: LanguageModelError) => void = () => {};
    const stopped = new Promise<never>((_, reject) => {
      stop = (err) => {
        controller.abort();
        reject(err);
      };
    });
    const timer = setTimeout(
      () => stop(new LanguageModelError('timeout', `the model endpoint ${host} did not finish within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    );
    const onAbort = () => stop(new LanguageModelError('aborted', `request to the model endpoint ${host} aborted`));
    request.signal?.addEventListener('abort', onAbort, { once: true });
    const started = performance.now();
    const running = work(controller.signal, started);
    // Whichever loses the race settles later, unobserved.
    running.catch(() => {});
    stopped.catch(() => {});
    try {
      return await Promise.race([running, stopped]);
    } catch (err) {
      throw toLanguageModelError(err, this.ctx);
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      if (!controller.signal.aborted) controller.abort();
    }
  }
}

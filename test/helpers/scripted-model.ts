/**
 * An in-process language model for tests: a queue of scripted answers (a completion, or a
 * failure of a given kind, or a hang until the request's signal aborts), and every request it
 * was sent, so a test can count calls and read the messages.
 */
import {
  LanguageModelError,
  type Completion,
  type CompletionRequest,
  type LanguageModel,
  type LanguageModelErrorKind,
  type TokenUsage,
} from '../../src/app/language-model.js';

/** One scripted answer. */
export type Scripted =
  | { text: string; usage?: Partial<TokenUsage>; finishReason?: string; latencyMs?: number }
  | { fail: LanguageModelErrorKind; status?: number }
  | { hang: true };

/** A request as the double received it, and whether it was streamed. */
export interface Received {
  request: CompletionRequest;
  streamed: boolean;
}

export class ScriptedModel implements LanguageModel {
  readonly configured = true;
  readonly received: Received[] = [];
  private readonly queue: Scripted[] = [];

  constructor(readonly defaultModel: string | null = 'gpt-4o-mini') {}

  /** Queues answers, given in order to the next requests. */
  script(...answers: Scripted[]): this {
    this.queue.push(...answers);
    return this;
  }

  get calls(): number {
    return this.received.length;
  }

  complete(request: CompletionRequest): Promise<Completion> {
    return this.answer(request, false, () => {});
  }

  stream(request: CompletionRequest, onDelta: (text: string) => void): Promise<Completion> {
    return this.answer(request, true, onDelta);
  }

  private answer(request: CompletionRequest, streamed: boolean, onDelta: (text: string) => void): Promise<Completion> {
    this.received.push({ request, streamed });
    const next = this.queue.shift();
    if (next === undefined) return Promise.reject(new LanguageModelError('malformed', 'the script has no answer left'));
    if ('hang' in next) {
      return new Promise((_, reject) => {
        request.signal?.addEventListener('abort', () => reject(new LanguageModelError('aborted', 'aborted')));
      });
    }
    if ('fail' in next) return Promise.reject(new LanguageModelError(next.fail, `scripted ${next.fail}`, next.status ?? null));
    if (streamed) for (const piece of next.text.split(/(?<=[.!?] )/)) onDelta(piece);
    const usage: TokenUsage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, ...next.usage };
    const ms = next.latencyMs ?? 1;
    return Promise.resolve({ text: next.text, finishReason: next.finishReason ?? 'stop', usage, latencyMs: ms, firstTokenMs: ms });
  }
}

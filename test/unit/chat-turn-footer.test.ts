/**
 * The dim footer `vagent chat` prints under each turn (src/cli/commands/chat-view.ts): the
 * model's tokens and cost, or why the model gave nothing (a failed request with its HTTP status,
 * a request not sent), and live speech synthesis's cost when not zero.
 */
import { describe, expect, it } from 'vitest';
import type { TurnResult } from '../../src/client/index.js';
import { turnFooter } from '../../src/cli/commands/chat-view.js';

function turn(over: {
  layer?: string;
  steps?: Array<Record<string, unknown>>;
  usage?: Record<string, unknown>;
  cost?: Record<string, number>;
  llmMs?: number | null;
}): TurnResult {
  return {
    text: 'x',
    trace: {
      layer: over.layer ?? 'reprompt',
      llm_used: over.usage !== undefined,
      steps: over.steps ?? [],
      latency_ms: { total: 12, llm: over.llmMs ?? null },
      ...(over.usage ? { usage: over.usage } : {}),
    },
    cost: { llm_inr: 0, tts_inr: 0, stt_inr: 0, total_inr: 0, ...over.cost },
    session_totals: { total_inr: 0 },
  } as unknown as TurnResult;
}

const zero = { model: 'm', input_tokens: 0, output_tokens: 0, cached_tokens: 0 };

describe('the chat turn footer', () => {
  it('a failed request: the reason and status instead of zero tokens', () => {
    const f = turnFooter(turn({ steps: [{ layer: 'llm', result: 'miss', detail: 'refused', status: 401 }], usage: zero, llmMs: 230 }));
    expect(f).toBe('layer=reprompt · ₹0.00 · 12 ms · llm refused (401) 230 ms (session ₹0.00)');
    const t = turnFooter(turn({ steps: [{ layer: 'llm', result: 'miss', detail: 'timeout' }], usage: zero, llmMs: 5000 }));
    expect(t).toContain('· llm timeout 5.0 s (session');
    expect(t).not.toContain('0 in (0 cached)');
  });

  it('an answer: tokens and cost; an answer not used says why', () => {
    const usage = { model: 'm', input_tokens: 535, output_tokens: 20, cached_tokens: 0 };
    const ok = turnFooter(turn({ layer: 'llm', usage, cost: { llm_inr: 0.007841, total_inr: 0.007841 }, llmMs: 80 }));
    expect(ok).toBe('layer=llm · ₹0.01 · 12 ms · llm 535 in (0 cached) / 20 out tokens ₹0.007841 80 ms (session ₹0.00)');
    const bad = turnFooter(turn({ steps: [{ layer: 'llm', result: 'miss', detail: 'other_language' }], usage, llmMs: 80 }));
    expect(bad).toContain('80 ms (not used: other_language)');
  });

  it('no request sent: why (no model, budget, cap); an agent without llm: nothing', () => {
    expect(turnFooter(turn({ steps: [{ layer: 'llm', result: 'miss', detail: 'not_configured' }] }))).toContain(
      ' · llm not called (not_configured)',
    );
    expect(turnFooter(turn({ steps: [{ layer: 'llm', result: 'skip', detail: 'not configured' }] }))).not.toContain('llm');
  });

  it('live speech synthesis: its cost beside the total when not zero', () => {
    expect(turnFooter(turn({ layer: 'capture', cost: { tts_inr: 0.24, total_inr: 0.24 } }))).toBe(
      'layer=capture · ₹0.24 · 12 ms · tts ₹0.24 (session ₹0.00)',
    );
    expect(turnFooter(turn({ layer: 'capture' }))).not.toContain('tts');
  });
});

/**
 * The price list (docs/api-decisions.md "Costs"): `config/pricing.yaml`, prices in INR per 1M LLM
 * tokens per model, per 1k synthesised characters per TTS provider, per minute of STT per
 * provider. A provider or model without a price costs 0.
 */
import fs from 'node:fs';
import YAML from 'yaml';
import { z } from 'zod';
import { priceMicro } from '../domain/money.js';
import { ConfigError } from './load.js';

const inr = z.number().min(0).max(1e6);

/** The shape of `pricing.yaml`. */
export const PricingSchema = z.object({
  currency: z.literal('INR').default('INR'),
  llm: z
    .record(
      z.string(),
      z.object({
        input_per_1m_tokens: inr.default(0),
        output_per_1m_tokens: inr.default(0),
        cached_per_1m_tokens: inr.default(0),
      }),
    )
    .default({}),
  tts: z.record(z.string(), z.object({ per_1k_chars: inr.default(0) })).default({}),
  stt: z.record(z.string(), z.object({ per_minute: inr.default(0) })).default({}),
});
/** A validated price list. */
export type PriceList = z.infer<typeof PricingSchema>;

/** Prices as functions returning integer micro-rupees. */
export class Pricing {
  constructor(readonly list: PriceList) {}

  /** Cost of `chars` characters sent to TTS `provider`, µ₹ (0 for an unpriced provider). */
  ttsMicro(provider: string, chars: number): number {
    return priceMicro(chars, this.list.tts[provider]?.per_1k_chars ?? 0, 1000);
  }

  /** Cost of the characters sent to each TTS provider (`{provider: chars}`), µ₹: {@link ttsMicro} summed. */
  ttsMicroOf(charsBy: Readonly<Record<string, number>>): number {
    return Object.entries(charsBy).reduce((sum, [provider, chars]) => sum + this.ttsMicro(provider, chars), 0);
  }

  /** Cost of `audioMs` milliseconds of audio metered by STT `provider`, µ₹ (0 if unpriced or unknown). */
  sttMicro(provider: string | undefined, audioMs: number): number {
    if (!provider) return 0;
    return priceMicro(audioMs, this.list.stt[provider]?.per_minute ?? 0, 60_000);
  }

  /** Cost of one LLM call on `model`, µ₹. */
  llmMicro(model: string, tokens: { input: number; output: number; cached: number }): number {
    const p = this.list.llm[model];
    if (!p) return 0;
    return (
      priceMicro(tokens.input, p.input_per_1m_tokens, 1e6) +
      priceMicro(tokens.output, p.output_per_1m_tokens, 1e6) +
      priceMicro(tokens.cached, p.cached_per_1m_tokens, 1e6)
    );
  }
}

/**
 * Reads and validates a price list.
 * @throws ConfigError naming the file and each invalid entry.
 */
export function loadPricing(file: string): Pricing {
  let parsed: unknown;
  try {
    parsed = YAML.parse(fs.readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    throw new ConfigError(`cannot read price list ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const r = PricingSchema.safeParse(parsed);
  if (!r.success) {
    throw new ConfigError(
      `invalid price list ${file}:\n${r.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n')}`,
    );
  }
  return new Pricing(r.data);
}

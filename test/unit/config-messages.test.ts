/**
 * A setting refused for a bound says what is wrong (as docs/api-decisions.md "Errors" has for the
 * API): every numeric setting's minimum and maximum, taken from the settings schema itself, is
 * refused with a message naming that bound rather than "must be a number".
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SettingsSchema } from '../../src/config/schema.js';

interface Bound {
  path: string[];
  value: number;
  limit: number;
}

/** Every numeric minimum and maximum of the settings (nested objects included). */
function boundsOf(schema: Record<string, unknown>, path: string[] = []): Bound[] {
  const out: Bound[] = [];
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [key, s] of Object.entries(props)) {
    const at = [...path, key];
    if (s.type === 'number' || s.type === 'integer') {
      if (typeof s.maximum === 'number') out.push({ path: at, value: s.maximum + 1, limit: s.maximum });
      if (typeof s.minimum === 'number') out.push({ path: at, value: s.minimum - 1, limit: s.minimum });
    } else if (s.type === 'object') {
      out.push(...boundsOf(s, at));
    }
  }
  return out;
}

describe('settings past a bound', () => {
  const bounds = boundsOf(z.toJSONSchema(SettingsSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>);

  it('covers the numeric settings', () => {
    expect(bounds.map((b) => b.path.join('.'))).toEqual(
      expect.arrayContaining(['port', 'tenant_daily_budget_inr', 'livekit.request_timeout_s', 'call_reservation_inr']),
    );
  });

  it('are refused with a message naming the bound', () => {
    const wrong: string[] = [];
    for (const b of bounds) {
      const input: Record<string, unknown> = { state_dir: '/tmp/x' };
      let node = input;
      for (const k of b.path.slice(0, -1)) node = (node[k] = {}) as Record<string, unknown>;
      node[b.path[b.path.length - 1]!] = b.value;
      const r = SettingsSchema.safeParse(input);
      const issue = r.success ? undefined : r.error.issues.find((i) => i.path.join('.') === b.path.join('.'));
      const message = issue?.message ?? '(accepted)';
      if (!message.includes(String(b.limit)) && !/(or more|positive|greater than 0)/.test(message))
        wrong.push(`${b.path.join('.')}=${b.value}: ${message}`);
    }
    expect(wrong).toEqual([]);
  });
});

/**
 * The shipped example agents (config/agents/*.yaml) are valid agent definitions
 * (src/domain/agent.ts, docs/agents.md), use only template placeholders that can be filled, and
 * config/pricing.yaml has the shape of `PricingSchema` (src/config/pricing.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PricingSchema } from '../../src/config/pricing.js';
import { type AgentDefinition, formatIssuePath, parseAgentDefinition } from '../../src/domain/agent.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const AGENTS_DIR = path.join(ROOT, 'config', 'agents');
const AGENT_FILES = fs
  .readdirSync(AGENTS_DIR)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();

/** Parses and validates one agent file (never throws on an invalid definition). */
function parseFile(file: string) {
  return parseAgentDefinition(parse(fs.readFileSync(path.join(AGENTS_DIR, file), 'utf8')));
}

/** The valid agents by file name; invalid files fail their own "is a valid agent" test. */
const agents = new Map<string, AgentDefinition>();
for (const f of AGENT_FILES) {
  const r = parseFile(f);
  if (r.ok) agents.set(f, r.agent);
}
const byId = (id: string): AgentDefinition => {
  const a = [...agents.values()].find((x) => x.id === id);
  if (!a) expect.fail(`no example agent ${id}`);
  return a;
};

/** Every spoken text of an agent, with a label saying where it is. */
function texts(a: AgentDefinition): { where: string; text: string }[] {
  const out: { where: string; text: string }[] = [];
  a.opening.forEach((c, i) => out.push({ where: `opening[${i}]`, text: c.text }));
  a.steps.forEach((s, i) => {
    for (const k of ['ask', 'reprompt', 'fallback'] as const) {
      const t = s[k];
      if (t !== undefined) out.push({ where: `steps[${i}].${k}`, text: t });
    }
  });
  a.faq.forEach((f, i) => out.push({ where: `faq[${i}].answer`, text: f.answer }));
  out.push({ where: 'closing', text: a.closing });
  for (const [k, v] of Object.entries(a.messages)) {
    if (typeof v === 'string') out.push({ where: `messages.${k}`, text: v });
    else if (Array.isArray(v)) v.forEach((t, i) => out.push({ where: `messages.${k}[${i}]`, text: t }));
  }
  return out;
}

/** The names inside `{{ … }}` in `text`. */
const placeholders = (text: string): string[] => [...text.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)].map((m) => m[1]!);

describe('example agents (config/agents)', () => {
  it('ships the four documented agents, each file named after its id', () => {
    expect(AGENT_FILES.length).toBeGreaterThanOrEqual(4);
    for (const [file, a] of agents) expect(file.replace(/\.ya?ml$/, '')).toBe(a.id);
    expect([...agents.values()].map((a) => a.id)).toEqual(
      expect.arrayContaining(['ag_emi_reminder', 'ag_emi_reminder_hi', 'ag_clinic_booking', 'ag_delivery_confirmation']),
    );
  });

  it.each(AGENT_FILES)('%s is a valid agent definition', (file) => {
    const r = parseFile(file);
    if (!r.ok) expect.fail(`${file}:\n${r.issues.map((i) => `  ${formatIssuePath(i.path)}: ${i.message}`).join('\n')}`);
    expect(r.agent.opening.length).toBeGreaterThan(0);
    expect(r.agent.steps.length).toBeGreaterThan(0);
  });

  it('has the documented directions and languages', () => {
    expect(byId('ag_emi_reminder').direction).toBe('outbound');
    expect(byId('ag_emi_reminder_hi').direction).toBe('outbound');
    expect(byId('ag_delivery_confirmation').direction).toBe('outbound');
    expect(byId('ag_clinic_booking').direction).toBe('inbound');
    expect(byId('ag_emi_reminder').language).toBe('en-IN');
    expect(byId('ag_emi_reminder_hi').language).toBe('hi-IN');
  });

  it('the Hindi reminder has the same steps and slots as the English one, in Devanagari', () => {
    const en = byId('ag_emi_reminder');
    const hi = byId('ag_emi_reminder_hi');
    const shape = (a: AgentDefinition) => a.steps.map((s) => [s.id, s.capture?.slot, s.capture?.type, s.confirm, s.optional]);
    expect(shape(hi)).toEqual(shape(en));
    expect(hi.faq.map((f) => f.intent).sort()).toEqual(en.faq.map((f) => f.intent).sort());
    for (const { where, text } of texts(hi)) expect(text, `${where} is in Devanagari`).toMatch(/[\u0900-\u097F]/);
    for (const f of hi.faq) {
      expect(
        f.keywords.some((k) => /[\u0900-\u097F]/.test(k)),
        `faq ${f.intent}: a Devanagari keyword`,
      ).toBe(true);
      expect(
        f.keywords.some((k) => /^[\x20-\x7E]+$/.test(k)),
        `faq ${f.intent}: a romanised keyword`,
      ).toBe(true);
    }
  });

  it('the clinic agent captures name, date, time, a 10-digit mobile and an optional reason; its closing is static', () => {
    const a = byId('ag_clinic_booking');
    const step = (slot: string) => a.steps.find((s) => s.capture?.slot === slot);
    expect(step('patient_name')).toMatchObject({ confirm: 'readback', capture: { type: 'person_name' } });
    expect(step('visit_date')).toMatchObject({ confirm: 'readback', capture: { type: 'date' } });
    expect(step('visit_time')).toMatchObject({ confirm: 'readback', capture: { type: 'time' } });
    expect(step('phone')).toMatchObject({ confirm: 'digits', capture: { type: 'digits', min_length: 10, max_length: 10 } });
    expect(step('visit_reason')).toMatchObject({ optional: true, capture: { type: 'text' } });
    expect(placeholders(a.closing)).toEqual([]);
  });

  it('the EMI reminders play who is calling whole and set phone-line limits; the clinic agent keeps the defaults', () => {
    for (const id of ['ag_emi_reminder', 'ag_emi_reminder_hi']) {
      const a = byId(id);
      expect(
        a.opening.findIndex((o) => o.barge_in === false),
        `${id}: its first line heard whole`,
      ).toBe(0);
      expect(
        a.opening.filter((o) => o.barge_in === false),
        `${id}: one line heard whole`,
      ).toHaveLength(1);
      expect(a.media).toEqual({
        barge_in: true,
        no_speech_timeout_ms: 7000,
        max_silence_reprompts: 2,
        max_call_duration_s: 600,
        end_of_utterance_ms: { yes_no: 600 },
      });
    }
    const clinic = byId('ag_clinic_booking');
    expect(clinic.media).toBeUndefined();
    expect(clinic.opening.some((o) => o.barge_in !== undefined) || clinic.steps.some((s) => s.barge_in !== undefined)).toBe(false);
  });

  it('no example agent tells the caller the call is recorded: vagent keeps no call audio', () => {
    for (const a of agents.values()) {
      const said = [...texts(a).map((t) => t.text), ...a.opening.map((o) => o.text)];
      expect(
        said.filter((t) => /\b(recorded|recording)\b|रिकॉर्ड (की|किया|हो)/i.test(t)),
        a.id,
      ).toEqual([]);
    }
  });

  it('every English agent has fillers', () => {
    for (const a of agents.values()) if (a.language.startsWith('en')) expect(a.messages.fillers?.length ?? 0).toBeGreaterThan(0);
  });

  // customer_name, context.<key>[.<key>…] and captured slots; `{{value}}` only in the readback line.
  it.each(AGENT_FILES)('%s uses only placeholders that can be filled', (file) => {
    const a = agents.get(file);
    if (!a) return expect.fail(`${file} is not a valid agent`);
    const slots = new Set(a.steps.flatMap((s) => (s.capture ? [s.capture.slot] : [])));
    const bad: string[] = [];
    for (const { where, text } of texts(a)) {
      for (const p of placeholders(text)) {
        const ok =
          p === 'customer_name' ||
          /^context(\.[A-Za-z0-9_]+)+$/.test(p) ||
          slots.has(p) ||
          (where === 'messages.readback' && p === 'value');
        if (!ok) bad.push(`${where}: {{${p}}}`);
      }
      // A lone brace pair left over after the placeholders is a typo such as "{{name}".
      if (/\{\{|\}\}/.test(text.replace(/\{\{\s*[^{}]*?\s*\}\}/g, ''))) bad.push(`${where}: unbalanced braces`);
    }
    // A step's own lines may use only the slots captured before it.
    a.steps.forEach((s, i) => {
      const earlier = new Set(a.steps.slice(0, i).flatMap((x) => (x.capture ? [x.capture.slot] : [])));
      for (const t of [s.ask, s.reprompt, s.fallback]) {
        for (const p of placeholders(t ?? '')) if (slots.has(p) && !earlier.has(p)) bad.push(`steps[${i}]: {{${p}}} is not captured yet`);
      }
    });
    expect(bad).toEqual([]);
  });
});

describe('config/pricing.yaml', () => {
  const pricing = parse(fs.readFileSync(path.join(ROOT, 'config', 'pricing.yaml'), 'utf8')) as Record<string, unknown>;
  const table = (name: string) => {
    const t = pricing[name];
    expect(t, `${name} is a map`).toBeTypeOf('object');
    return Object.entries(t as Record<string, Record<string, unknown>>);
  };
  const price = (v: unknown) => {
    expect(v).toBeTypeOf('number');
    expect(Number.isFinite(v) && (v as number) >= 0).toBe(true);
  };

  it('is in INR with llm, tts and stt tables', () => {
    expect(pricing.currency).toBe('INR');
    expect(Object.keys(pricing).sort()).toEqual(['currency', 'llm', 'stt', 'tts']);
  });

  it('is accepted by the price-list loader', () => {
    const r = PricingSchema.safeParse(pricing);
    expect(r.success, r.error?.message).toBe(true);
  });

  it('prices LLM models per 1M input, output and cached tokens', () => {
    const rows = table('llm');
    expect(rows.length).toBeGreaterThan(0);
    for (const [, p] of rows) {
      expect(Object.keys(p).sort()).toEqual(['cached_per_1m_tokens', 'input_per_1m_tokens', 'output_per_1m_tokens']);
      Object.values(p).forEach(price);
    }
  });

  it('prices TTS per 1k characters, with the embedded engine free', () => {
    const rows = table('tts');
    for (const [, p] of rows) {
      expect(Object.keys(p)).toEqual(['per_1k_chars']);
      price(p.per_1k_chars);
    }
    expect(Object.fromEntries(rows)['espeak-ng']).toEqual({ per_1k_chars: 0 });
  });

  it('prices STT per minute', () => {
    const rows = table('stt');
    expect(rows.length).toBeGreaterThan(0);
    for (const [, p] of rows) {
      expect(Object.keys(p)).toEqual(['per_minute']);
      price(p.per_minute);
    }
  });
});

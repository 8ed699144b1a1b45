/**
 * A question volunteers nothing (src/engine/turn.ts, `onlyAsks` in src/engine/intents.ts;
 * docs/agents.md "How a call runs"): "is Dr Rao available today?" at the name step asks about
 * the doctor, it does not choose the visit date; a polite request ("can you book me in for
 * tomorrow?") and a statement still fill later steps.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { looksLikeQuestion, normalizeUtterance, onlyAsks } from '../../src/engine/intents.js';
import { compileAgent, initialState } from '../../src/engine/state.js';
import { runTurn } from '../../src/engine/turn.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const REF = Date.parse('2026-11-21T10:00:00+05:30');

function clinic() {
  const r = parseAgentDefinition(parse(fs.readFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), 'utf8')));
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return compileAgent(r.agent);
}

const first = (text: string) => {
  const a = clinic();
  return runTurn(a, initialState(a), { text, nowMs: REF, refMs: REF, vars: {} });
};

describe('a question at the name step', () => {
  it.each(['is Dr Rao available today?', 'is Dr Rao available today', 'Does Dr Shah see children on Monday?', 'kya doctor kal aayenge?'])(
    '%s takes no visit date',
    (text) => {
      const out = first(text);
      expect(out.state.slots).toEqual({});
      expect(out.trace.some((s) => s.detail === 'volunteered')).toBe(false);
    },
  );

  it('still takes the name said with it, and leaves the day to its own step', () => {
    const out = first("It's for Priya, can she come tomorrow?");
    expect(out.state.slots).toEqual({ patient_name: 'Priya' });
  });

  it.each(['can you book me in for tomorrow', 'Could I come in tomorrow?', 'tomorrow please, for my mother'])(
    '%s (a request or a statement) still volunteers the day',
    (text) => {
      const out = first(text);
      expect(out.state.slots.visit_date).toBe('2026-11-22');
      expect(out.trace).toContainEqual(expect.objectContaining({ detail: 'volunteered', slot: 'visit_date' }));
    },
  );
});

describe('onlyAsks', () => {
  it('is a question that is not a polite request', () => {
    const asks = (text: string) => onlyAsks(text, normalizeUtterance(text));
    expect(asks('is Dr Rao available today?')).toBe(true);
    expect(asks('can you tell me if the clinic is open on Sunday')).toBe(true);
    expect(asks('can you book it for Monday?')).toBe(false);
    expect(asks('so could we please reschedule to Friday?')).toBe(false);
    expect(asks('Monday works')).toBe(false);
    expect(looksLikeQuestion('can you book it for Monday?', normalizeUtterance('can you book it for Monday?'))).toBe(true);
  });
});

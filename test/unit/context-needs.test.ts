/**
 * What an agent needs from its session (src/engine/context-needs.ts): missing values, defaults
 * and the warnings of `vagent agent apply`, located in the agent file (src/cli/agent-file.ts).
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAgentSource } from '../../src/cli/agent-file.js';
import { parseAgentDefinition, type AgentDefinition } from '../../src/domain/agent.js';
import { contextWarnings, missingSessionValues, withContextDefaults } from '../../src/engine/context-needs.js';

function agent(fields: Record<string, unknown>): AgentDefinition {
  const r = parseAgentDefinition({
    id: 'ag_t',
    name: 'T',
    direction: 'outbound',
    language: 'en-IN',
    opening: [{ text: 'Hello.' }],
    closing: 'Bye.',
    ...fields,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.agent;
}

describe('missingSessionValues', () => {
  const a = agent({
    opening: [{ text: 'Hello {{customer_name}}.' }],
    required_context: ['amount', 'order.id'],
  });

  it('lists required keys in order, then customer_name, each with its reason', () => {
    expect(missingSessionValues(a, { context: {} })).toEqual([
      { param: 'context.amount', reason: 'missing' },
      { param: 'context.order.id', reason: 'missing' },
      { param: 'customer_name', reason: 'missing' },
    ]);
    expect(missingSessionValues(a, { customer_name: '', context: { amount: ' ', order: { id: [1] } } })).toEqual([
      { param: 'context.amount', reason: 'empty' },
      { param: 'context.order.id', reason: 'not_text' },
      { param: 'customer_name', reason: 'empty' },
    ]);
  });

  it('accepts text, numbers (0 too) and booleans', () => {
    expect(missingSessionValues(a, { customer_name: 'Ravi', context: { amount: 0, order: { id: false } } })).toEqual([]);
  });

  it('needs nothing of an agent that declares nothing and says no name', () => {
    expect(missingSessionValues(agent({ closing: 'Bye {{context.x}}.' }), { context: {} })).toEqual([]);
  });
});

describe('withContextDefaults', () => {
  const a = agent({ context_defaults: { branch: 'our branch', 'shop.city': 'Pune', 'n.m': 3 } });

  it('fills absent, null and blank keys, building nested objects; keeps given values; leaves the input alone', () => {
    const given = { branch: '  ', shop: { name: 'X' } };
    expect(withContextDefaults(a, given)).toEqual({ branch: 'our branch', shop: { name: 'X', city: 'Pune' }, n: { m: 3 } });
    expect(given).toEqual({ branch: '  ', shop: { name: 'X' } });
    expect(withContextDefaults(a, { branch: 'Baner', shop: { city: 'Mumbai' }, n: { m: 0 } })).toEqual({
      branch: 'Baner',
      shop: { city: 'Mumbai' },
      n: { m: 0 },
    });
  });

  it('does not write through a value that is not an object', () => {
    expect(withContextDefaults(a, { shop: 'X', n: [1] })).toEqual({ branch: 'our branch', shop: 'X', n: [1] });
  });
});

describe('contextWarnings', () => {
  it('names each {{context.x}} neither required nor defaulted, once per text, at the text', () => {
    const a = agent({
      opening: [{ text: 'Hi {{context.shop}}, {{context.shop}} again.' }],
      steps: [{ id: 'one', ask: 'Pay {{context.amount}} by {{context.due}}?', reprompt: 'By {{context.due}}?' }],
      faq: [{ intent: 'where', keywords: ['where'], answer: 'At {{context.branch}}.' }],
      required_context: ['amount'],
      context_defaults: { branch: 'the branch' },
    });
    const w = contextWarnings(a);
    expect(w.map((x) => [x.path.join('.'), x.message.slice(0, x.message.indexOf(' is neither'))])).toEqual([
      ['opening.0.text', '{{context.shop}}'],
      ['steps.0.ask', '{{context.due}}'],
      ['steps.0.reprompt', '{{context.due}}'],
    ]);
    expect(w[0]!.message).toContain('add "shop" to required_context, or give it a default in context_defaults');
  });

  it('warns that an inbound call cannot bring a customer name or required context (call.* it does bring)', () => {
    const inbound = agent({
      direction: 'inbound',
      opening: [{ text: 'Hi {{customer_name}}.' }],
      required_context: ['call.from', 'member_id'],
    });
    expect(contextWarnings(inbound)).toEqual([
      { path: ['direction'], message: expect.stringContaining('an inbound call brings no context.member_id, customer_name') },
    ]);
    expect(contextWarnings(agent({ direction: 'inbound', required_context: ['call.from'] }))).toEqual([]);
  });

  it('the shipped agents declare everything they speak', () => {
    for (const name of ['ag_emi_reminder', 'ag_emi_reminder_hi', 'ag_delivery_confirmation', 'ag_clinic_booking']) {
      const f = parseAgentSource(`${name}.yaml`, fs.readFileSync(new URL(`../../config/agents/${name}.yaml`, import.meta.url), 'utf8'));
      expect(f.ok && f.warnings, name).toEqual([]);
    }
  });
});

describe('agent file warnings', () => {
  it('are located at the line and column of the text', () => {
    const text = [
      'id: ag_t',
      'name: T',
      'direction: outbound',
      'language: en-IN',
      'opening:',
      '  - text: "Hello."',
      'steps:',
      '  - id: one',
      '    ask: "Pay {{context.amount}}?"',
      'closing: "Bye."',
      '',
    ].join('\n');
    const f = parseAgentSource('t.yaml', text);
    if (!f.ok) throw new Error('expected a valid file');
    expect(f.warnings).toHaveLength(1);
    expect(f.warnings[0]).toMatchObject({ file: 't.yaml', line: 9, col: 10, field: 'steps[0].ask' });
    const declared = parseAgentSource('t.yaml', text.replace('closing:', 'required_context: [amount]\nclosing:'));
    expect(declared.ok && declared.warnings).toEqual([]);
  });
});

/** `findJsonHazard` and `formatJsonPath` (src/domain/json.ts): what the shared body parser refuses. */
import { describe, expect, it } from 'vitest';
import { findJsonHazard, formatJsonPath, jsonDepthAtMost } from '../../src/domain/json.js';

/** `[[…[]…]]` nested `levels` deep, parsed (JSON.parse does not recurse on the call stack). */
const deepArray = (levels: number) => JSON.parse('['.repeat(levels) + ']'.repeat(levels)) as unknown;

describe('findJsonHazard', () => {
  it('finds nothing in primitives and ordinary values', () => {
    for (const v of [null, 1, 'x', true, {}, [], { a: [1, { b: 'c' }] }, { constructor: 'x' }, { constructor: { name: 'y' } }]) {
      expect(findJsonHazard(v, 33)).toBeNull();
    }
  });

  it('counts depth as jsonDepthAtMost does, at the limit and one past it', () => {
    for (const levels of [2, 10, 33, 34]) {
      const v = { x: deepArray(levels - 1) };
      expect(findJsonHazard(v, 33) === null).toBe(jsonDepthAtMost(v, 33));
    }
    expect(findJsonHazard({ x: deepArray(32) }, 33)).toBeNull();
    expect(findJsonHazard({ x: deepArray(33) }, 33)).toEqual({ kind: 'too_deep', path: ['x', ...Array<number>(32).fill(0)] });
  });

  it('does not overflow the call stack on 500 000 levels', () => {
    expect(findJsonHazard(deepArray(500_000), 33)?.kind).toBe('too_deep');
  });

  it('counts a cyclic value as too deep', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(findJsonHazard(a, 33)?.kind).toBe('too_deep');
  });

  it('finds prototype keys with their paths', () => {
    expect(findJsonHazard(JSON.parse('{"a":{"b":[{"__proto__":{}}]}}'), 33)).toEqual({
      kind: 'prototype_key',
      path: ['a', 'b', 0, '__proto__'],
    });
    expect(findJsonHazard(JSON.parse('{"constructor":{"prototype":1}}'), 33)).toEqual({
      kind: 'prototype_key',
      path: ['constructor', 'prototype'],
    });
  });
});

describe('formatJsonPath', () => {
  it('writes paths as the API names params', () => {
    expect(formatJsonPath(['auth', 'password'])).toBe('auth.password');
    expect(formatJsonPath(['numbers', 2])).toBe('numbers[2]');
    expect(formatJsonPath([0, 'a'])).toBe('[0].a');
    expect(formatJsonPath(['k'.repeat(100)])).toBe(`${'k'.repeat(64)}…`);
  });
});

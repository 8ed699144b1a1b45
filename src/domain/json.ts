/** Checks on free JSON values taken from request bodies (`context`, and every body as a whole). */

/** Deepest nesting of objects and arrays accepted in a request's `context`. */
export const MAX_CONTEXT_DEPTH = 32;

/**
 * Deepest nesting accepted in any request body: the body's own object around a field whose value
 * nests {@link MAX_CONTEXT_DEPTH} levels (a `context` at its deepest), so every field of every
 * body has the same bound as `context`.
 */
export const MAX_BODY_DEPTH = MAX_CONTEXT_DEPTH + 1;

/**
 * Whether `value` nests objects and arrays at most `max` levels deep. A primitive is depth 0;
 * an object or array is one more than its deepest member (so `{}` and `[]` are depth 1 and
 * `{"a": {"b": 1}}` is depth 2).
 *
 * Iterative, with an explicit stack, so that it cannot overflow the call stack on a hostile
 * value (JSON.parse accepts nesting far deeper than recursion can follow). It stops at the
 * first member deeper than `max`, and visits each member at most once for a tree (a JSON
 * value); a cyclic value counts as too deep.
 */
export function jsonDepthAtMost(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (max < 1) return false;
  const stack: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    const members: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const member of members) {
      if (typeof member !== 'object' || member === null) continue;
      if (depth + 1 > max) return false;
      stack.push({ node: member, depth: depth + 1 });
    }
  }
  return true;
}

/** One step of a path into a JSON value: an object key or an array index. */
export type JsonPathStep = string | number;

/**
 * What makes a parsed JSON value unsafe to hand on (see {@link findJsonHazard}):
 * - `too_deep`: `path` leads to a member nested deeper than the limit;
 * - `prototype_key`: `path` ends with a key that would reach an object's prototype when the
 *   value is merged into another object: `__proto__`, or `prototype` inside a `constructor`.
 */
export type JsonHazard = { kind: 'too_deep'; path: JsonPathStep[] } | { kind: 'prototype_key'; path: JsonPathStep[] };

interface Visit {
  node: object;
  depth: number;
  /** The visit of the object holding `node`, and `node`'s key or index in it (null for the root). */
  parent: Visit | null;
  step: JsonPathStep;
}

function pathOf(visit: Visit, last: JsonPathStep): JsonPathStep[] {
  const path: JsonPathStep[] = [last];
  for (let v: Visit | null = visit; v !== null && v.parent !== null; v = v.parent) path.push(v.step);
  return path.reverse();
}

/**
 * The first hazard in a value fresh from `JSON.parse` (whose `__proto__` keys are plain own
 * properties, harmless until something copies them), or null when there is none: a member
 * nested more than `maxDepth` levels deep (depth counted as {@link jsonDepthAtMost} does), or a
 * prototype key (`__proto__`; `constructor` holding an object with a `prototype` key, as
 * fastify's secure-json-parse refuses them).
 *
 * Iterative with an explicit stack and parent links (the path is built only for the hazard
 * found), so it cannot overflow the call stack and costs one visit per object or array.
 */
export function findJsonHazard(value: unknown, maxDepth: number): JsonHazard | null {
  if (typeof value !== 'object' || value === null) return null;
  const stack: Visit[] = [{ node: value, depth: 1, parent: null, step: '' }];
  if (maxDepth < 1) return { kind: 'too_deep', path: [] };
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { node, depth } = visit;
    const isArray = Array.isArray(node);
    const keys: JsonPathStep[] = isArray ? Array.from(node.keys()) : Object.keys(node);
    for (const key of keys) {
      if (key === '__proto__') return { kind: 'prototype_key', path: pathOf(visit, key) };
      const member: unknown = (node as Record<JsonPathStep, unknown>)[key];
      if (typeof member !== 'object' || member === null) continue;
      if (key === 'constructor' && !isArray && Object.hasOwn(member, 'prototype')) {
        return { kind: 'prototype_key', path: [...pathOf(visit, key), 'prototype'] };
      }
      if (depth + 1 > maxDepth) return { kind: 'too_deep', path: pathOf(visit, key) };
      stack.push({ node: member, depth: depth + 1, parent: visit, step: key });
    }
  }
  return null;
}

/**
 * A path as the API's `param` names a field: `auth.password`, `numbers[2]`, `[0]` for an index
 * at the top. Keys longer than 64 characters are cut (with `…`), so a hostile key is never
 * echoed in full.
 */
export function formatJsonPath(path: readonly JsonPathStep[]): string {
  let out = '';
  for (const step of path) {
    if (typeof step === 'number') out += `[${step}]`;
    else {
      const key = step.length > 64 ? `${step.slice(0, 64)}…` : step;
      out += out === '' ? key : `.${key}`;
    }
  }
  return out;
}

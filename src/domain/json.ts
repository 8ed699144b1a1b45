/** Checks on free JSON values taken from request bodies (`context`). */

/** Deepest nesting of objects and arrays accepted in a request's `context`. */
export const MAX_CONTEXT_DEPTH = 32;

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

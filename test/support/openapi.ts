/**
 * Reading the served OpenAPI document (`GET /v1/openapi.json`) in tests: its operations, every
 * constrained field of them (path and query parameters, body properties at any depth), and
 * fast-check arbitraries generating values the document says are valid.
 */
import fc from 'fast-check';
import type { TestApp } from './app.js';

/** A JSON Schema node of the document (the subset vagent's document uses). */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  default?: unknown;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: JsonSchema;
}

/** One operation of the document. */
export interface Operation {
  method: string;
  /** The OpenAPI path, e.g. `/v1/sessions/{session_id}/turn`. */
  path: string;
  parameters: Parameter[];
  /** The JSON request body's schema, if the operation takes one. */
  body: JsonSchema | undefined;
  /** Whether it needs no API key (`security: []`). */
  open: boolean;
}

/** A field of an operation: where it is and its schema (null alternatives removed). */
export interface Field {
  op: Operation;
  in: 'path' | 'query' | 'body';
  /** `session_id`, `auth.password`, `numbers[]`, `context.now`. */
  path: string;
  /** The last segment of `path` (`password`, `numbers[]`, `now`). */
  name: string;
  schema: JsonSchema;
}

interface Document {
  paths: Record<
    string,
    Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: JsonSchema }> }; security?: unknown[] }>
  >;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** The served document, fetched without a key (it needs none). */
export async function servedDocument(t: TestApp): Promise<Document> {
  const res = await t.call('GET', '/v1/openapi.json', undefined, { key: null });
  if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${res.statusCode}`);
  return res.json() as Document;
}

/** `schema` with `$ref`s to `#/components/schemas/…` replaced by their targets (the document has no cycles). */
function resolve(doc: Document, schema: JsonSchema): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const ref = (node as JsonSchema).$ref;
    if (typeof ref === 'string') {
      const target = doc.components?.schemas?.[ref.split('/').pop()!];
      if (!target) throw new Error(`unresolved $ref ${ref}`);
      return walk(target);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
  };
  return walk(schema) as JsonSchema;
}

/** Every operation of the document, in document order. */
export function operationsOf(doc: Document): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const body = op.requestBody?.content?.['application/json']?.schema;
      ops.push({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []).map((p) => ({ ...p, schema: resolve(doc, p.schema) })),
        body: body === undefined ? undefined : resolve(doc, body),
        open: Array.isArray(op.security) && op.security.length === 0,
      });
    }
  }
  return ops;
}

/** `schema` without its `null` alternative (`anyOf: [X, {type: null}]` → X); null when it is only null. */
export function nonNull(schema: JsonSchema): JsonSchema | null {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const rest = alternatives.filter((s) => s.type !== 'null');
    return rest.length === 1 ? nonNull(rest[0]!) : { ...schema, anyOf: rest, oneOf: undefined };
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t) => t !== 'null');
    return types.length === 0 ? null : { ...schema, type: types.length === 1 ? types[0] : types };
  }
  return schema.type === 'null' ? null : schema;
}

/** Every path parameter, query parameter and body property (at any depth, array items as `x[]`) of `op`. */
export function fieldsOf(op: Operation): Field[] {
  const fields: Field[] = [];
  for (const p of op.parameters) {
    if (p.in === 'path' || p.in === 'query') fields.push({ op, in: p.in, path: p.name, name: p.name, schema: p.schema });
  }
  const walk = (schema: JsonSchema | null, path: string, name: string): void => {
    if (schema === null) return;
    if (path !== '') fields.push({ op, in: 'body', path, name, schema });
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      walk(nonNull(child), path ? `${path}.${key}` : key, key);
    }
    if (schema.items) walk(nonNull(schema.items), `${path}[]`, `${name}[]`);
  };
  if (op.body) walk(nonNull(op.body), '', '');
  return fields;
}

/** Longest string or array generated where the schema allows more (keeps requests small). */
const CAP = 40;

/** A regular expression of the document, as JSON Schema means it (ECMA-262, Unicode mode). */
export const patternOf = (schema: JsonSchema): RegExp | null => (schema.pattern === undefined ? null : new RegExp(schema.pattern, 'u'));

/** Length in code points, as JSON Schema counts it. */
const codePoints = (s: string): number => [...s].length;

/**
 * An arbitrary of the values `schema` says are valid: types, enums, patterns (generated with
 * fast-check's `stringMatching`), length and numeric bounds, required and optional properties.
 * Free-form values (`{}`, `additionalProperties`) are small JSON. With `full`, every described
 * property is present and nothing is null (a base to change one field of).
 */
export function valuesOf(schema: JsonSchema, options: { full?: boolean } = {}): fc.Arbitrary<unknown> {
  const full = options.full === true;
  if (full) {
    const n = nonNull(schema);
    if (n !== null && n !== schema) return valuesOf(n, options);
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((a) => valuesOf(a, options)));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type) => valuesOf({ ...schema, type }, options)));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = Math.max(min, Math.min(schema.maxLength ?? CAP, CAP));
      const pattern = patternOf(schema);
      if (pattern === null) return fc.string({ unit: 'grapheme', minLength: min, maxLength: max });
      const within = schema.maxLength ?? Number.POSITIVE_INFINITY;
      return fc.stringMatching(pattern).filter((s) => codePoints(s) >= min && codePoints(s) <= within);
    }
    case 'array': {
      const items = schema.items ?? {};
      return fc.array(valuesOf(items, options), {
        minLength: Math.max(schema.minItems ?? 0, full ? 1 : 0),
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)),
      });
    }
    case 'object': {
      const props = schema.properties ?? {};
      const known = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valuesOf(v, options)])), {
        requiredKeys: full ? Object.keys(props) : (schema.required ?? []),
      });
      const extra = schema.additionalProperties;
      const freeForm = extra === true || (typeof extra === 'object' && Object.keys(extra).length === 0);
      if (!freeForm) return known;
      // Free-form members next to (or instead of) the described ones; names that are not described.
      const free = fc.dictionary(
        fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !(k in props) && k !== '__proto__'),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 3 },
      );
      return fc.tuple(free, known).map(([a, b]) => ({ ...a, ...b }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** One value of `arbitrary`, the same for the same seed. */
export function sampleOne<T>(arbitrary: fc.Arbitrary<T>, seed: number): T {
  return fc.sample(arbitrary, { seed, numRuns: 1 })[0]!;
}

/** `op.path` with its path parameters filled from `values` (URL-encoded). */
export function urlOf(op: Operation, values: Record<string, unknown>, query: Record<string, unknown> = {}): string {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(String(values[name])));
  const q = Object.entries(query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return q.length === 0 ? path : `${path}?${q.join('&')}`;
}

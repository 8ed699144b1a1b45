/**
 * The schema error formatter of `/v1` routes: the error code of a request failing its schema.
 *
 * A route's zod schemas (src/contract) both validate its request and are published as its
 * OpenAPI document, so every pattern the server enforces is in the document. Most failures are
 * `invalid_request`; a field the contract marked with `answeredWith` (src/contract/answers.ts)
 * is answered with its own code when its format check fails. {@link installSchemaErrors} gives
 * each route of a scope a formatter that does so.
 */
import type { FastifyInstance, FastifySchema, FastifySchemaValidationError, FastifyServerOptions } from 'fastify';
import { z } from 'zod';
import { answerOf } from './answers.js';
import { ApiError, type ErrorCode } from '../domain/errors.js';

/** Fastify's schema error formatter: the error a request failing its schema is answered with. */
type SchemaErrorFormatter = NonNullable<FastifyServerOptions['schemaErrorFormatter']>;

/** `schema` without optional/nullable/default wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) s = s.unwrap() as z.ZodType;
  return s;
}

/** The field schema at `path` inside `schema` (objects and arrays), or undefined. */
function fieldAt(schema: unknown, path: string[]): z.ZodType | undefined {
  if (!(schema instanceof z.ZodType)) return undefined;
  let s = unwrap(schema);
  for (const segment of path) {
    if (s instanceof z.ZodObject) {
      const next = (s.shape as Record<string, z.ZodType | undefined>)[segment];
      if (next === undefined) return undefined;
      s = unwrap(next);
    } else if (s instanceof z.ZodArray) {
      s = unwrap(s.element as z.ZodType);
    } else {
      return undefined;
    }
  }
  return s;
}

const segmentsOf = (instancePath: string): string[] => instancePath.split('/').filter((p) => p.length > 0);

/** `auth.username`, `numbers[2]` for a validation error's path. */
function paramOf(segments: string[]): string | undefined {
  if (segments.length === 0) return undefined;
  return segments.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** The schema error formatter of a route whose request schemas are `schema`. */
function formatterFor(schema: FastifySchema): SchemaErrorFormatter {
  return (errors, dataVar) => {
    const part = (schema as Record<string, unknown>)[dataVar];
    const codeOf = (e: FastifySchemaValidationError): ErrorCode | undefined => {
      if (e.keyword !== 'invalid_format') return undefined;
      const field = fieldAt(part, segmentsOf(e.instancePath));
      return field === undefined ? undefined : answerOf(field);
    };
    const plain = errors.findIndex((e) => codeOf(e) === undefined);
    if (plain === -1) {
      const first = errors[0]!;
      const param = paramOf(segmentsOf(first.instancePath));
      return new ApiError(codeOf(first)!, first.message ?? 'malformed', param === undefined ? {} : { param });
    }
    // The error handler answers a validation error's first issue as invalid_request: put
    // first the first issue that is not answered otherwise (fastify attaches this array).
    if (plain > 0) errors.unshift(...errors.splice(plain, 1));
    return new Error(errors[0]!.message ?? 'invalid request');
  };
}

/**
 * Gives every route registered in `scope` after this call (and in its child scopes) the schema
 * error formatter of its own request schemas (see `answeredWith` in src/contract/answers.ts).
 */
export function installSchemaErrors(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    if (route.schema && route.schemaErrorFormatter === undefined) route.schemaErrorFormatter = formatterFor(route.schema);
  });
}

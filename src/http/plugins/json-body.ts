/**
 * The one JSON body parser of the API (docs/api-decisions.md "Errors"): bad input gets a
 * clear error and changes nothing. Every `application/json` body of every route passes here before any
 * hook sees it, so each check holds for all routes, idempotent or not:
 *
 * - the bytes must be UTF-8 (invalid sequences would otherwise be stored as U+FFFD);
 * - the text must be JSON (a leading byte-order mark is allowed, as fastify allows it);
 * - no member may nest deeper than `context` may ({@link MAX_BODY_DEPTH}): deeper values would
 *   overflow the stack of whatever walks them later (the idempotency fingerprint's canonical
 *   JSON did, answering 500);
 * - no key may reach an object's prototype (`__proto__`, `constructor.prototype`).
 *
 * Each refusal is `invalid_request` (400) naming what was refused, with `param` where a field
 * is to blame.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { findJsonHazard, formatJsonPath, MAX_BODY_DEPTH, MAX_CONTEXT_DEPTH } from '../../domain/json.js';

const BOM = 0xfeff;

/**
 * Parses one request body.
 * @param body the raw bytes (fastify has already enforced the body limit and Content-Length).
 * @returns the parsed value, free of the hazards above.
 * @throws ApiError invalid_request: an empty body, bytes that are not UTF-8, text that is not
 *         JSON, a member nested too deeply (`param` names the top-level field holding it) or a
 *         prototype key (`param` is the path to it).
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) {
    throw new ApiError('invalid_request', 'Content-Type is application/json but the body is empty; send a JSON object');
  }
  if (!isUtf8(body)) {
    throw new ApiError('invalid_request', 'request body is not valid UTF-8: JSON must be sent as UTF-8 text');
  }
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === BOM) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_request', 'request body is not valid JSON');
  }
  const hazard = findJsonHazard(value, MAX_BODY_DEPTH);
  if (hazard === null) return value;
  if (hazard.kind === 'too_deep') {
    // The body's own object is one level; each field may nest as deep as `context` may.
    const top = hazard.path[0];
    const field = typeof top === 'string' && hazard.path.length > 1 ? formatJsonPath([top]) : null;
    return field === null
      ? refuse(`request body is nested too deeply: at most ${MAX_BODY_DEPTH} levels`)
      : refuse(`${field} is nested too deeply: at most ${MAX_CONTEXT_DEPTH} levels`, field);
  }
  const param = formatJsonPath(hazard.path);
  return refuse(
    `${param} is refused: a key named __proto__ (or prototype inside constructor) can alter object ` +
      'prototypes when the body is copied (prototype pollution); rename or remove the key',
    param,
  );
}

function refuse(message: string, param?: string): never {
  throw new ApiError('invalid_request', message, param === undefined ? {} : { param });
}

/**
 * Replaces fastify's `application/json` parser (secure-json-parse, which decodes invalid UTF-8
 * to U+FFFD and refuses prototype keys without saying which) with {@link parseJsonBody}. A
 * scope that needs the raw text (the LiveKit webhook, whose signature covers the bytes) adds its
 * own parser, which takes precedence there.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (_request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
      let value: unknown;
      try {
        value = parseJsonBody(body);
      } catch (err) {
        done(err as Error);
        return;
      }
      done(null, value);
    },
  );
}

/**
 * The one place where failures become HTTP responses (docs/api-decisions.md "Errors").
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ApiError } from '../../domain/errors.js';
import { sendError } from '../reply.js';
import type { MethodIndex } from './methods.js';

function paramFromPath(instancePath: string): string | undefined {
  const parts = instancePath.split('/').filter((p) => p.length > 0);
  if (parts.length === 0) return undefined;
  return parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** Maps any thrown value to an {@link ApiError}. Unknown errors become `internal_error`. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0]!;
    const param = paramFromPath(first.instancePath);
    const where = (error as { validationContext?: string }).validationContext;
    if (param === undefined && where === 'body') {
      return new ApiError('invalid_request', 'request body must be a JSON object');
    }
    const message = param && !first.message.startsWith(param) ? `${param}: ${first.message}` : first.message;
    return new ApiError('invalid_request', message, param ? { param } : {});
  }
  const fe = error as Partial<FastifyError>;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('invalid_request', 'request body is too large', { status: 413 });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_request', 'request body must be JSON with Content-Type: application/json', { status: 415 });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'Content-Type is application/json but the body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_request', 'request body is not valid JSON');
    case 'FST_ERR_BAD_URL':
      return new ApiError('invalid_request', 'the URL path is not valid: a %-escape is malformed or decodes to invalid UTF-8');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('invalid_request', 'a segment of the URL path is too long');
    default:
      break;
  }
  if (error instanceof SyntaxError || (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)) {
    const status = fe.statusCode === 413 || fe.statusCode === 415 ? fe.statusCode : 400;
    return new ApiError('invalid_request', error instanceof SyntaxError ? 'request body is not valid JSON' : 'malformed request', {
      status,
    });
  }
  return new ApiError('internal_error', 'internal error; the request id in X-Request-Id finds it in the daemon log');
}

/**
 * Fastify's `frameworkErrors` option: errors raised by the router before any hook runs
 * (a malformed %-escape, an over-long path parameter). Without it fastify answers them itself,
 * in its own body shape, without `X-Request-Id`.
 */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply.header('x-request-id', request.id), toApiError(error));
}

/**
 * Installs the error handler and the not-found handler: a path no route has is 404 `not_found`;
 * a path some route has, asked with another method, is 405 `invalid_request` with an `Allow`
 * header listing the path's methods (docs/api-decisions.md "Errors").
 * @param methods the methods of every route's path (see `collectRouteMethods`); without it,
 *                every unrouted request is 404.
 */
export function installErrorHandling(app: FastifyInstance, methods?: MethodIndex): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.debug({ code: apiError.code }, 'request rejected');
    return sendError(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = methods?.allowedFor(path) ?? [];
    if (allowed.length > 0) {
      return sendError(
        reply.header('allow', allowed.join(', ')),
        new ApiError(
          'invalid_request',
          `method ${request.method.slice(0, 20)} is not allowed on ${path.slice(0, 200)}; it allows ${allowed.join(', ')}`,
          { status: 405 },
        ),
      );
    }
    return sendError(reply, new ApiError('not_found', `no such endpoint: ${request.method} ${path.slice(0, 200)}`));
  });
}

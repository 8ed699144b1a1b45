/**
 * Errors Node's HTTP parser raises before a request reaches fastify (docs/api-decisions.md "Errors":
 * every response has the error body and `X-Request-Id`): over-long headers (431), a
 * Content-Length that is not a number, is given twice or beside Transfer-Encoding, bad chunked
 * framing, a request line that is not HTTP (400), a request that did not arrive in time (408).
 * Fastify's default handler answers these in its own body shape and without the header.
 *
 * The answer follows Node's own rules: only on a writable socket with no response under way on
 * it (so the peer never gets two status lines interleaved), then the connection is closed, since
 * the parser cannot find where the next request starts.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { randomToken } from '../../domain/ids.js';
import { JSON_TYPE } from '../reply.js';

/** A parser error as Node hands it to `clientError` (`code` is llhttp's `HPE_…` or Node's `ERR_…`). */
type ClientError = Error & { code?: string };

const FRAMING = 'the request framing is not valid HTTP/1.1';

/** Status and message per parser error code; any other code is a 400 {@link FRAMING}. */
const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    message: `the request line and headers are too large: at most ${http.maxHeaderSize / 1024} KiB`,
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, message: 'the chunk extensions of the request body are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'the request did not arrive in time' },
  HPE_INVALID_CONTENT_LENGTH: { status: 400, message: 'Content-Length is not a valid length' },
  HPE_UNEXPECTED_CONTENT_LENGTH: {
    status: 400,
    message: 'Content-Length is given twice, or together with Transfer-Encoding: send one of them, once',
  },
  HPE_INVALID_TRANSFER_ENCODING: {
    status: 400,
    message: 'Transfer-Encoding is not valid: it must end with chunked, and cannot come with a Content-Length',
  },
  HPE_INVALID_CHUNK_SIZE: {
    status: 400,
    message: 'the chunked request body is not valid: a chunk size is not a hexadecimal number',
  },
  HPE_INVALID_EOF_STATE: {
    status: 400,
    message: 'the connection ended before the whole request arrived: the body is shorter than its Content-Length',
  },
  HPE_INVALID_METHOD: { status: 400, message: `${FRAMING}: the method is not valid` },
  HPE_INVALID_URL: { status: 400, message: `${FRAMING}: the request target is not valid` },
  HPE_INVALID_VERSION: { status: 400, message: `${FRAMING}: the HTTP version is not valid` },
  HPE_INVALID_HEADER_TOKEN: { status: 400, message: `${FRAMING}: a header name or value has a character HTTP does not allow` },
};

/** The API error for a parser error (`invalid_request`, with the status of {@link CLIENT_ERRORS}). */
export function clientApiError(err: ClientError): ApiError {
  const known = err.code === undefined ? undefined : CLIENT_ERRORS[err.code];
  const { status, message } = known ?? { status: 400, message: `${FRAMING} (${(err.code ?? 'parse error').slice(0, 40)})` };
  return new ApiError('invalid_request', message, { status });
}

/**
 * Fastify's `clientErrorHandler` option (Node's `clientError` event, `this` the fastify
 * instance): answers with the error body (docs/api-decisions.md "Errors"), a fresh `X-Request-Id` (logged at
 * debug level with the parser's code) and `Connection: close`, then destroys the socket.
 * A connection reset, or a socket already gone, gets nothing.
 */
export function handleClientError(this: FastifyInstance, err: ClientError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error = clientApiError(err);
  const requestId = `req_${randomToken(12)}`;
  this.log.debug({ reqId: requestId, code: err.code, status: error.status }, 'client error before routing');
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(error.toBody());
    socket.write(
      `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status] ?? 'Bad Request'}\r\n` +
        `Content-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

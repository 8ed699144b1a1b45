/**
 * Responses Node or fastify would otherwise give themselves, before any route runs, without the
 * error body (docs/api-decisions.md "Errors") or `X-Request-Id` (errors of the HTTP parser itself are in
 * `client-errors.ts`):
 *
 * - an HTTP/1.1 request without `Host` (RFC 9112 §3.2: 400), which Node answers with an empty
 *   body — the app's server is built with Node's own check off (`SERVER_OPTIONS`) and does it here;
 * - an `Expect` other than `100-continue` (417), which Node answers with an empty body;
 * - a request arriving while the daemon drains for shutdown (503, `Connection: close`), which
 *   fastify answers in its own body shape (`return503OnClosing`, turned off in the app);
 * - and while draining, a response in flight closes its keep-alive connection after it
 *   (`Connection: close`), so a stop waits for in-flight requests, never for idle clients.
 */
import type http from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { randomToken } from '../../domain/ids.js';
import { JSON_TYPE, sendError } from '../reply.js';

/** While draining, how often connections that have become idle are closed, ms. */
const DRAIN_SWEEP_MS = 100;

/** Options of the app's Node HTTP server (fastify's `http` option): Node's Host check is done here instead. */
export const SERVER_OPTIONS: http.ServerOptions = { requireHostHeader: false };

/**
 * Installs the checks above on `app` (an `onRequest` hook, and the server's `checkExpectation`
 * listener). Register it after the hook that sets `X-Request-Id`, and build the app with
 * `http: SERVER_OPTIONS` and `return503OnClosing: false`.
 */
export function installEarlyResponses(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    // A keep-alive connection whose response was under way when the drain began becomes idle
    // only after Node's one pass over idle connections at close: without this sweep it would
    // hold the close for the keep-alive timeout (72 s), and a stopping daemon with it.
    const sweep = setInterval(() => app.server.closeIdleConnections(), DRAIN_SWEEP_MS);
    sweep.unref();
    app.server.once('close', () => clearInterval(sweep));
    done();
  });
  // Responses finished while draining close their connection, so the drain ends with them.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (closing) {
      sendError(
        reply.header('connection', 'close'),
        new ApiError('internal_error', 'the daemon is shutting down; retry in a moment', { status: 503 }),
      );
      return;
    }
    const raw = request.raw;
    if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && raw.headers.host === undefined) {
      sendError(
        reply.header('connection', 'close'),
        new ApiError('invalid_request', 'an HTTP/1.1 request needs a Host header', { param: 'Host' }),
      );
      return;
    }
    done();
  });
  app.server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const error = new ApiError('invalid_request', 'the only Expect this server meets is 100-continue', {
      status: 417,
      param: 'Expect',
    });
    const body = JSON.stringify(error.toBody());
    res.writeHead(417, {
      'content-type': JSON_TYPE,
      'content-length': Buffer.byteLength(body),
      'x-request-id': `req_${randomToken(12)}`,
      connection: 'close',
    });
    res.end(body);
    req.resume();
  });
}

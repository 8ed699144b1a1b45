/**
 * Telephony routes (docs/calls.md):
 *
 * - `POST /v1/telephony/livekit/webhook` — LiveKit's webhooks. No API key: the request is
 *   authenticated by LiveKit's signature (a JWT in `Authorization`, whose `sha256` claim
 *   covers the exact raw body), so the body is kept as the raw string it arrived as.
 *   401 when the signature does not verify; 400 when it does but the body is not an event
 *   (not JSON, not an object, a field of the wrong type); 503 when LiveKit is not configured
 *   (anyone can send these, so the first is logged at warn and the rest only counted:
 *   `events.since_start.webhook_refused_not_configured` of the check below).
 * - `GET /v1/telephony/check` — the doctor behind `vagent telephony check`: one
 *   authenticated LiveKit request (list outbound trunks), webhook event counts, the
 *   caller's budget position, and one authenticated handshake with each configured cloud
 *   speech recogniser (`recognizers`; `ok` stays LiveKit's).
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../../../domain/errors.js';
import type { Services } from '../../../app/index.js';
import { WebhookSignatureError } from '../../../app/inbound.js';
import { MalformedWebhookError } from '../../../app/telephony-port.js';
import { principalOf } from '../../plugins/auth.js';
import { errorResponses, TelephonyCheckSchema, WebhookAckSchema } from '../../../contract/index.js';
import { sendError } from '../../reply.js';

/** The counter of webhooks refused because LiveKit is not configured (`vagent telephony check`). */
export const NOT_CONFIGURED = 'webhook_refused_not_configured';

/** The webhook route (register in a scope without API-key auth). */
export function livekitWebhookRoute(services: Services, log: () => FastifyBaseLogger): (scope: FastifyInstance) => Promise<void> {
  return async (scope) => {
    // LiveKit posts `application/webhook+json`; the signature covers the bytes as sent, so the
    // body is never parsed and re-serialised before verification (the app's JSON parser is
    // replaced in this scope).
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(['application/webhook+json', 'application/json'], { parseAs: 'string' }, (_req, body, done) =>
      done(null, body),
    );
    scope.post(
      '/telephony/livekit/webhook',
      {
        schema: {
          summary: "LiveKit webhooks (verified by LiveKit's signature, not an API key)",
          tags: ['telephony'],
          security: [],
          response: {
            200: WebhookAckSchema,
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        if (!services.telephony.configured) {
          // Answered here rather than thrown: the error handler logs every 5xx at error level,
          // and this one is anyone's to send.
          if (services.inbound.countRefusal(NOT_CONFIGURED) === 1) {
            log().warn(
              { counter: NOT_CONFIGURED },
              'LiveKit webhook refused: LiveKit is not configured on this daemon; further ones are only counted (vagent telephony check)',
            );
          }
          return sendError(
            reply,
            new ApiError('telephony_not_configured', 'LiveKit is not configured on this daemon, so its webhooks cannot be verified'),
          );
        }
        const raw = typeof request.body === 'string' ? request.body : '';
        const auth = request.headers.authorization;
        let outcome;
        try {
          outcome = await services.inbound.receive(raw, Array.isArray(auth) ? auth[0] : auth);
        } catch (err) {
          // A signed body that is not an event is the sender's mistake (400: LiveKit does not
          // retry it); anything but these two is the daemon's failure: a 5xx, which LiveKit retries.
          if (err instanceof MalformedWebhookError) {
            log().warn({ reason: err.message }, 'LiveKit webhook refused: signed, but not an event');
            throw new ApiError('invalid_request', `webhook signature is valid, but ${err.message}`);
          }
          if (!(err instanceof WebhookSignatureError)) throw err;
          log().warn({ reason: err.message }, 'LiveKit webhook refused: signature not valid');
          throw new ApiError(
            'unauthorized',
            'webhook signature not valid: LiveKit signs with the API key and secret vagent is configured with',
          );
        }
        return { received: true as const, duplicate: outcome.recorded && outcome.duplicate, recorded: outcome.recorded };
      },
    );
  };
}

/** The authenticated telephony routes. */
export function telephonyRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/telephony/check',
      {
        schema: {
          summary: 'Check the LiveKit settings and the cloud speech recognisers with one authenticated request each',
          tags: ['telephony'],
          response: { 200: TelephonyCheckSchema, ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const [r, recognizers] = await Promise.all([services.telephony.check(), services.recognizers.check()]);
        const base = {
          agent_name: services.telephony.agentName,
          events: services.inbound.counts(),
          budget: services.budget.status(principal.tenantId),
          recognizers,
        };
        return r.ok
          ? { ok: true, url: r.url, outbound_trunks: r.outboundTrunks, ms: r.ms, ...base }
          : { ok: false, url: r.url, problem: r.problem, message: r.message, ...base };
      },
    );
  };
}

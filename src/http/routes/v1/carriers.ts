/**
 * `/v1/carriers` (an extension; docs/carrier-auth.md): the tenant's carrier credentials,
 * which authenticate the carriers' own WebSocket upgrades on `GET /v1/media/{dialect}`, and
 * its stream token.
 *
 * - `PUT /v1/carriers/{twilio|plivo|exotel}` — store or replace a dialect's credentials.
 *   Each dialect has its own path in the OpenAPI document, because each takes its own body.
 * - `GET /v1/carriers` — every dialect: configured or not, a hint, the stream URL path.
 * - `DELETE /v1/carriers/{twilio|plivo|exotel}` — forget a dialect's credentials.
 * - `POST /v1/carriers/stream_token` — a new stream token, shown once; the old one stops working.
 *   It refuses an `Idempotency-Key`: a replay would have to keep the token to repeat it.
 *
 * Any other name in place of the dialect is 404 `not_found` naming the three dialects.
 * Credentials are write-only: no response, replay, log line or error holds one.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError } from '../../../domain/errors.js';
import { CARRIER_DIALECTS } from '../../../media/carriers/types.js';
import type { Services } from '../../../app/index.js';
import { principalOf } from '../../plugins/auth.js';
import { scopeOf, sendOutcome } from '../../plugins/idempotency.js';
import { installSchemaErrors } from '../../../contract/schema-errors.js';
import {
  CARRIER_BODIES,
  CarrierDeletedSchema,
  CarrierListSchema,
  CarrierSchema,
  errorResponses,
  StreamTokenSchema,
} from '../../../contract/index.js';

const SUMMARY: Record<(typeof CARRIER_DIALECTS)[number], string> = {
  twilio: 'Store the Twilio auth token that signs Media Streams upgrades (X-Twilio-Signature)',
  plivo: 'Store the Plivo Auth ID and token that sign Audio Streams upgrades (signature V3)',
  exotel: 'Store the Exotel API key and token that Voicebot streams send as basic auth',
};

/** Registers the carrier routes (in the API-key scope). */
export function carrierRoutes(services: Services): FastifyPluginAsyncZod {
  const { carriers } = services;
  return async (app) => {
    installSchemaErrors(app);
    for (const dialect of CARRIER_DIALECTS) {
      app.put(
        `/carriers/${dialect}`,
        {
          config: { idempotency: 'atomic' },
          schema: {
            summary: SUMMARY[dialect],
            tags: ['carriers'],
            body: CARRIER_BODIES[dialect],
            response: { 200: CarrierSchema, ...errorResponses },
          },
        },
        async (request, reply) =>
          sendOutcome(reply, await carriers.set(principalOf(request), dialect, request.body, scopeOf(request, 200))),
      );

      app.delete(
        `/carriers/${dialect}`,
        {
          config: { idempotency: 'atomic' },
          schema: {
            summary: `Forget the ${dialect} credentials`,
            tags: ['carriers'],
            response: { 200: CarrierDeletedSchema, ...errorResponses },
          },
        },
        async (request, reply) => sendOutcome(reply, await carriers.remove(principalOf(request), dialect, scopeOf(request, 200))),
      );
    }

    // Any other dialect: a clear 404 rather than "no such endpoint". The pattern leaves out
    // stream_token, whose path has POST only (so PUT on it stays 405 with Allow: POST).
    app.route({
      method: ['PUT', 'DELETE'],
      url: '/carriers/:dialect(^(?!stream_token$)[^/]*$)',
      schema: { hide: true },
      handler: async (request) => {
        carriers.dialectOf((request.params as { dialect: string }).dialect);
        // Not reached: every dialect has its own route above.
        throw new ApiError('not_found', 'no such carrier dialect');
      },
    });

    app.get(
      '/carriers',
      {
        schema: {
          summary: 'List carrier credentials (never the secrets) and the stream token state',
          tags: ['carriers'],
          response: { 200: CarrierListSchema, ...errorResponses },
        },
      },
      async (request) => carriers.list(principalOf(request)),
    );

    app.post(
      '/carriers/stream_token',
      {
        schema: {
          summary: 'Make a new stream token (shown once); the previous one stops working',
          description: 'Refuses an Idempotency-Key: a replay would have to store the token.',
          tags: ['carriers'],
          response: { 201: StreamTokenSchema, ...errorResponses },
        },
        preValidation: async (request) => {
          if (request.headers['idempotency-key'] !== undefined) {
            throw new ApiError(
              'invalid_request',
              'POST /v1/carriers/stream_token takes no Idempotency-Key: the new token is shown once and never stored, so it cannot be replayed; send the request without one',
              { param: 'Idempotency-Key' },
            );
          }
        },
      },
      async (request, reply) => sendOutcome(reply, await carriers.rotateStreamToken(principalOf(request), scopeOf(request, 201))),
    );
  };
}

/**
 * `/v1/calls` (docs/calls.md; docs/api-decisions.md "Calls"), `GET /v1/calls` and
 * `POST /v1/calls/{call_id}/hangup` and `GET /v1/calls/{call_id}/recording` (extensions; docs/media.md "Recordings").
 *
 * Idempotency: a prepare-only call writes only the database, so its key is claimed atomically
 * with its writes; a dial (`dial: true` in the raw body) claims the key in a committed write
 * before the handler runs, so a concurrent or later retry can never reach the provider. A
 * hang-up, which asks LiveKit too, is claim-first as well.
 */
import fs from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../../../domain/errors.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../../app/index.js';
import { principalOf } from '../../plugins/auth.js';
import { scopeOf, sendOutcome } from '../../plugins/idempotency.js';
import { installSchemaErrors } from '../../../contract/schema-errors.js';
import {
  errorResponses,
  AudioFileSchema,
  CallHangupSchema,
  CallListQuery,
  CallListSchema,
  CallParams,
  CallPlacementSchema,
  CallStatusSchema,
  PlaceCallBody,
} from '../../../contract/index.js';

/** Registers the call routes. */
export function callRoutes(services: Services, log: () => FastifyBaseLogger): FastifyPluginAsyncZod {
  const { calls, callLines, recordings } = services;
  return async (app) => {
    installSchemaErrors(app);
    app.post(
      '/calls',
      {
        config: {
          idempotency: (request) => ((request.body as { dial?: unknown } | null)?.dial === true ? 'claim-first' : 'atomic'),
        },
        schema: {
          summary: 'Prepare a call, or with dial: true place it through LiveKit SIP',
          tags: ['calls'],
          body: PlaceCallBody,
          response: { 201: CallPlacementSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(
          reply,
          await calls.place(principalOf(request), request.body, scopeOf(request, 201), {
            onHangupError: (err, callId) =>
              log().warn(
                { call_id: callId, err: err instanceof Error ? err.message : String(err) },
                'a call hung up while it was dialled could not be hung up again; check the room in LiveKit',
              ),
          }),
        ),
    );

    app.get(
      '/calls',
      {
        schema: {
          summary: 'List calls, newest first (extension)',
          tags: ['calls'],
          querystring: CallListQuery,
          response: { 200: CallListSchema, ...errorResponses },
        },
      },
      async (request) =>
        calls.list(
          principalOf(request),
          request.query.status ?? null,
          request.query.cursor ?? null,
          request.query.limit,
          request.query.source ?? null,
        ),
    );

    app.post(
      '/calls/:call_id/hangup',
      {
        config: { idempotency: 'claim-first' },
        schema: {
          summary: 'Hang up a call (extension): its line through LiveKit, then its session; the call becomes completed',
          tags: ['calls'],
          params: CallParams,
          response: { 200: CallHangupSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await callLines.hangUp(principalOf(request), request.params.call_id, scopeOf(request, 200))),
    );

    app.get(
      '/calls/:call_id',
      {
        schema: {
          summary: 'Call status',
          tags: ['calls'],
          params: CallParams,
          response: { 200: CallStatusSchema, ...errorResponses },
        },
      },
      async (request) => calls.get(principalOf(request), request.params.call_id),
    );

    app.get(
      '/calls/:call_id/recording',
      {
        schema: {
          summary:
            "The call's recording (extension): a 16 kHz 16-bit PCM WAV, mono or dual (caller left, agent right); 404 when it has none",
          tags: ['calls'],
          params: CallParams,
          response: { 200: AudioFileSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        // The call's owner is checked as for its status; then its file, opened once.
        const view = calls.get(principalOf(request), request.params.call_id);
        const { file } = recordings.fileOf(Number(view.call_id.slice('cl_'.length)));
        let handle: fs.promises.FileHandle;
        let size: number;
        try {
          handle = await fs.promises.open(file, 'r');
        } catch {
          throw new ApiError('not_found', `call ${view.call_id} has no recording`, { param: 'call_id' });
        }
        try {
          size = (await handle.stat()).size;
        } catch {
          await handle.close();
          throw new ApiError('not_found', `call ${view.call_id} has no recording`, { param: 'call_id' });
        }
        return reply
          .header('content-type', 'audio/wav')
          .header('content-length', size)
          .header('content-disposition', `attachment; filename="${view.call_id}.wav"`)
          .header('cache-control', 'private, no-store')
          .send(handle.createReadStream());
      },
    );
  };
}

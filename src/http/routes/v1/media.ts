/**
 * `GET /v1/media/{twilio,exotel,plivo}` (docs/carrier-auth.md): carrier WebSocket media streams. docs/media.md shows how to point each
 * carrier here.
 *
 * Auth, on the upgrade request:
 * - `Authorization: Bearer <API key>` is always accepted (an unknown key → 401);
 * - else the carrier's own mechanism, checked with the tenant's stored carrier credentials
 *   (`?tenant=NAME`, default `default`): Twilio's `X-Twilio-Signature`, Plivo's
 *   `X-Plivo-Signature-V3`, Exotel's basic auth; present but wrong → 401;
 * - else the upgrade is accepted and the stream's `start` must carry the tenant's stream token
 *   as the custom parameter `stream_token`, or the socket closes (1008) before `start` is
 *   processed and no session opens.
 * Only a stream authenticated with an API key may label its call `simulator` (the custom
 * parameter `vagent_source`, sent by `vagent call simulate`; docs/api-decisions.md "Simulated
 * calls"): a carrier's signature or the stream token proves a carrier, never a simulation.
 * A plain GET (no upgrade) gets 400 saying this is a WebSocket endpoint.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { ApiError } from '../../../domain/errors.js';
import { TENANT_NAME_PATTERN } from '../../../domain/ids.js';
import { CARRIER_DIALECTS, type CarrierDialect } from '../../../media/carriers/index.js';
import type { Services } from '../../../app/index.js';
import { bearerKey } from '../../plugins/auth.js';

/**
 * What the media routes hand an accepted carrier WebSocket to: the daemon's media streams
 * (`MediaStreams`, src/daemon/media-streams.ts), given to the app by the daemon.
 */
export interface CarrierStreams {
  /**
   * Takes over `socket`, a carrier stream of `dialect` for `tenantId` (null: the stream must
   * prove its tenant in its `start` frame), with the upgrade's query parameters and origin.
   */
  accept(
    socket: WebSocket,
    dialect: CarrierDialect,
    tenantId: string | null,
    queryParams?: Record<string, string>,
    origin?: { byKey?: boolean; address?: string },
  ): void;
}

/** The media routes (register in a scope without the API-key hook: they authenticate themselves). */
export function mediaRoutes(
  services: Services,
  streams: () => CarrierStreams | null,
  publicUrl: string | null,
): (scope: FastifyInstance) => Promise<void> {
  return async (scope) => {
    for (const dialect of CARRIER_DIALECTS) {
      scope.route({
        method: 'GET',
        url: `/media/${dialect}`,
        schema: { hide: true },
        preValidation: async (request: FastifyRequest) => {
          if (!request.ws) return;
          if (!streams()) throw new ApiError('media_unavailable', 'media streams are not running on this daemon');
          const auth = authenticate(services, dialect, request, publicUrl);
          Object.assign(request, { mediaTenant: auth?.tenantId ?? null, mediaByKey: auth?.byKey === true });
        },
        handler: async (_request: FastifyRequest, _reply: FastifyReply) => {
          throw new ApiError(
            'invalid_request',
            `GET /v1/media/${dialect} is a WebSocket endpoint: connect with an Upgrade: websocket request (see docs/media.md)`,
          );
        },
        wsHandler: (socket, request) => {
          const media = streams();
          if (!media) {
            socket.close(1011, 'media streams are not running');
            return;
          }
          const auth = request as FastifyRequest & { mediaTenant?: string | null; mediaByKey?: boolean };
          media.accept(socket, dialect, auth.mediaTenant ?? null, queryParams(request), {
            byKey: auth.mediaByKey === true,
            address: request.socket.remoteAddress,
          });
        },
      });
    }
  };
}

/**
 * The tenant an upgrade request authenticates as and whether by an API key (else by the
 * carrier's own mechanism), or null when it carries no credentials (a stream token must then
 * come in `start`).
 * @throws ApiError unauthorized (401) when it carries credentials that do not verify
 */
function authenticate(
  services: Services,
  dialect: CarrierDialect,
  request: FastifyRequest,
  publicUrl: string | null,
): { tenantId: string; byKey: boolean } | null {
  const header = request.headers.authorization;
  const found = header ? bearerKey(header, services.tenants) : null;
  if (found) return { tenantId: found.tenantId, byKey: true };
  const query = request.query as Record<string, unknown>;
  const named = typeof query['tenant'] === 'string';
  const tenant = named ? (query['tenant'] as string) : 'default';
  if (!TENANT_NAME_PATTERN.test(tenant)) throw new ApiError('unauthorized', 'the tenant query parameter is not a tenant name');
  const verdict = services.carriers.verifyNative(dialect, tenant, {
    headers: request.headers,
    urls: signedUrls(request, publicUrl),
  });
  if (verdict === 'ok') return { tenantId: tenant, byKey: false };
  // A signature that does not verify for a tenant the URL named is refused. Without `?tenant=`
  // (Twilio allows no query string in <Stream url>, yet signs every upgrade) another tenant's
  // stream is signed with its own account: the stream token in `start` must then say whose it is.
  if (verdict === 'bad' && named)
    throw new ApiError(
      'unauthorized',
      `the ${dialect} signature or credentials do not verify for tenant ${tenant} (see: vagent carrier list)`,
    );
  return null;
}

/** Longest query parameter value taken as a custom parameter, characters. */
const MAX_QUERY_PARAM_CHARS = 1024;

/**
 * The stream URL's query parameters (except `tenant`): custom parameters for carriers that
 * set them on the URL (Exotel's applet, Plivo), merged under the `start` event's own.
 */
function queryParams(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  const query = request.query as Record<string, unknown>;
  let n = 0;
  for (const [k, v] of Object.entries(query)) {
    if (k === 'tenant' || typeof v !== 'string' || v.length > MAX_QUERY_PARAM_CHARS || k.length > 64) continue;
    if (++n > 32) break;
    out[k] = v;
  }
  return out;
}

/**
 * The absolute WebSocket URLs the carrier may have signed: from `public_url`, and from the Host
 * header (CarrierService.verifyNative also tries each with its http/https scheme twins).
 */
function signedUrls(request: FastifyRequest, publicUrl: string | null): string[] {
  const path = request.url;
  const urls: string[] = [];
  if (publicUrl) {
    const base = new URL(publicUrl);
    urls.push(`${base.protocol === 'https:' ? 'wss:' : 'ws:'}//${base.host}${path}`);
  }
  const host = request.headers.host;
  if (host) urls.push(`${request.headers['x-forwarded-proto'] === 'https' ? 'wss:' : 'ws:'}//${host}${path}`);
  return urls;
}

/**
 * The fastify application factory. It never listens: the daemon calls `listen()`, tests use
 * `inject()`.
 */
import fastifySwagger from '@fastify/swagger';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { ApiError } from '../domain/errors.js';
import { randomToken } from '../domain/ids.js';
import type { Services } from '../app/index.js';
import { requireApiKey } from './plugins/auth.js';
import { errorResponses, HealthQuery, HealthSchema, type HealthStatus } from '../contract/index.js';
import { handleClientError } from './plugins/client-errors.js';
import { installEarlyResponses, SERVER_OPTIONS } from './plugins/early-responses.js';
import { installErrorHandling, sendFrameworkError } from './plugins/errors.js';
import { installIdempotency } from './plugins/idempotency.js';
import { installJsonBodyParser } from './plugins/json-body.js';
import { collectRouteMethods } from './plugins/methods.js';
import { lazyChildLoggerFactory } from './request-logger.js';
import { agentRoutes } from './routes/v1/agents.js';
import { callRoutes } from './routes/v1/calls.js';
import { carrierRoutes } from './routes/v1/carriers.js';
import { eventRoutes, type EventRouteOptions } from './routes/v1/events.js';
import { livekitWebhookRoute, telephonyRoutes } from './routes/v1/telephony.js';
import { audioRoutes } from './routes/v1/audio.js';
import { numberRoutes } from './routes/v1/numbers.js';
import { mediaRoutes, type CarrierStreams } from './routes/v1/media.js';
import { MAX_FRAME_CHARS } from '../media/carriers/index.js';
import { sessionRoutes } from './routes/v1/sessions.js';
import { trunkRoutes } from './routes/v1/trunks.js';
import { webhookRoutes } from './routes/v1/webhooks.js';
import './types.js';

/** Options of {@link buildApp}. */
export interface AppOptions {
  services: Services;
  /** Largest accepted body in bytes (1 MiB). */
  bodyLimitBytes: number;
  /** pino logger options, a logger instance, or false for none. */
  logger?: FastifyServerOptions['logger'] | FastifyServerOptions['loggerInstance'];
  /** vagent's version, reported by `/v1/health`. */
  version: string;
  /**
   * Check every response a write route builds against its schema, failing the request when
   * the schema would change it (default true: tests). The daemon turns it off: routes build
   * their responses in the schema's exact shape, and the tests prove they do.
   */
  checkResponses?: boolean;
  /** The carrier media streams (docs/media.md), once running; null or absent: `/v1/media/*` answers 503. */
  media?: () => CarrierStreams | null;
  /** `public_url`: the URLs carriers sign are built from it (besides the Host header). */
  publicUrl?: string | null;
  /**
   * What `/v1/health` adds about call audio: whether speech recognition is on, and why not;
   * with `language` (`?language=`), also what hears that language.
   * @throws RangeError for a `language` that is not a BCP-47 tag
   */
  health?: (language?: string) => HealthExtras;
  /** The event stream's heartbeat and slow-reader bound (defaults: 15 s, 1 MiB; tests shorten them). */
  events?: EventRouteOptions;
}

/**
 * Call-audio status in `/v1/health` (the contract's {@link HealthStatus}, src/contract/health.ts):
 * `recognition` always, `media` once the call-audio workers run.
 */
export type HealthExtras = { recognition: NonNullable<HealthStatus['recognition']> } & Pick<HealthStatus, 'media'>;

/** Log redaction: credentials and keys never reach a log line (README.md "Operating the daemon"). */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["idempotency-key"]',
  '*.auth',
  '*.password',
  '*.api_key',
  '*.key',
  'body',
];

/** Request/response log serializers: method and route pattern only, never the raw URL. */
export const LOG_SERIALIZERS = {
  req(req: { method?: string; routeOptions?: { url?: string }; id?: string }) {
    return { method: req.method, route: req.routeOptions?.url ?? '(no route)' };
  },
  res(res: { statusCode?: number }) {
    return { statusCode: res.statusCode };
  },
};

/**
 * Longest path parameter routed, in characters: above any URL Node's HTTP parser accepts (16 KiB
 * of headers), so an over-long id or number still reaches its route and gets the route's own
 * error (trunk_not_found, invalid_request). There are no regex parameters, so the limit's ReDoS
 * guard is not needed.
 */
const MAX_PARAM_LENGTH = 16 * 1024;

/**
 * `jsonSchemaTransformObject` (fastify-type-provider-zod), less the `$id` it leaves on each
 * component schema: zod's `toJSONSchema` sets `$id` to the schema's `$ref` target
 * (`#/components/schemas/Call`), and a `$id` with a non-empty fragment is invalid JSON Schema
 * 2020-12 (§8.2.1; the meta-schema's `$id` pattern `^[^#]*#?$`), so OpenAPI 3.1 validators,
 * generated clients and fuzzers reject the document. A component is named by its key in
 * `components.schemas`; it needs no `$id`.
 */
function componentSchemasWithoutIds(input: Parameters<typeof jsonSchemaTransformObject>[0]): ReturnType<typeof jsonSchemaTransformObject> {
  const doc = jsonSchemaTransformObject(input) as { components?: { schemas?: Record<string, unknown> } };
  const schemas = doc.components?.schemas ?? {};
  for (const [name, schema] of Object.entries(schemas)) {
    if (typeof schema !== 'object' || schema === null || !('$id' in schema)) continue;
    const { $id: _dropped, ...rest } = schema as Record<string, unknown>;
    schemas[name] = rest;
  }
  return doc as ReturnType<typeof jsonSchemaTransformObject>;
}

/**
 * Builds the `/v1` application.
 * @returns a ready-to-`listen()` or `inject()` fastify instance (call `ready()` first for inject).
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services } = options;
  const loggerOption = options.logger ?? false;
  const isInstance = typeof loggerOption === 'object' && loggerOption !== null && 'child' in loggerOption;
  const app = Fastify({
    ...(isInstance
      ? { loggerInstance: loggerOption as FastifyServerOptions['loggerInstance'] }
      : { logger: loggerOption as FastifyServerOptions['logger'] }),
    bodyLimit: options.bodyLimitBytes,
    genReqId: () => `req_${randomToken(12)}`,
    // Each request's child logger is built when it first writes a line (most never do).
    childLoggerFactory: lazyChildLoggerFactory,
    // A request arriving while the daemon drains gets its 503 from installEarlyResponses.
    return503OnClosing: false,
    http: SERVER_OPTIONS,
    frameworkErrors: (error, request, reply) => sendFrameworkError(error, request, reply),
    clientErrorHandler: handleClientError,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  }).withTypeProvider<ZodTypeProvider>();

  // JSON only: without this, fastify's default text/plain parser would hand strings to the routes.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorate('checkResponses', options.checkResponses ?? true);
  app.decorateRequest('caller', null);
  app.decorateRequest('idem', null);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  installEarlyResponses(app);
  // Before any route: the methods of every path, for 405 and its Allow header.
  installErrorHandling(app, collectRouteMethods(app, MAX_PARAM_LENGTH));

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'vagent API',
        version: options.version,
        description: 'Trunks, numbers, sessions and calls of a vagent daemon.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    // Fills components.schemas from the schemas' `.meta({id})`; without it every
    // `$ref: '#/components/schemas/…'` in the document points at nothing.
    transformObject: componentSchemasWithoutIds,
  });

  // WebSocket upgrades go through the router and its hooks (auth before the upgrade). A frame
  // over the carriers' largest (bytes; their JSON is ASCII) is refused with close code 1009 by
  // ws itself, from its header, before its payload is read.
  await app.register(fastifyWebsocket, { options: { maxPayload: MAX_FRAME_CHARS } });

  await app.register(
    async (open) => {
      open.get(
        '/health',
        {
          schema: {
            summary: 'Liveness and version (no auth)',
            tags: ['meta'],
            security: [],
            querystring: HealthQuery,
            response: {
              200: HealthSchema,
              ...errorResponses,
            },
          },
        },
        async (request) => {
          const { language } = request.query as { language?: string };
          let extras: HealthExtras | Record<string, never>;
          try {
            extras = options.health?.(language) ?? {};
          } catch (err) {
            if (err instanceof RangeError)
              throw new ApiError('invalid_request', `language must be a BCP-47 language tag such as hi-IN: ${err.message}`, {
                param: 'language',
              });
            throw err;
          }
          return { status: 'ok' as const, version: options.version, ...extras };
        },
      );
      open.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      await open.register(audioRoutes(services.speech));
      await open.register(livekitWebhookRoute(services, () => app.log));
      await open.register(mediaRoutes(services, options.media ?? (() => null), options.publicUrl ?? null));
    },
    { prefix: '/v1' },
  );

  await app.register(
    async (authed) => {
      requireApiKey(authed, services.tenants);
      installIdempotency(authed, services.idempotency, services.uow);
      await authed.register(trunkRoutes(services));
      await authed.register(numberRoutes(services));
      await authed.register(agentRoutes(services, () => app.log));
      await authed.register(sessionRoutes(services));
      await authed.register(callRoutes(services, () => app.log));
      await authed.register(telephonyRoutes(services));
      await authed.register(carrierRoutes(services));
      await authed.register(eventRoutes(services, options.events ?? {}));
      await authed.register(webhookRoutes(services));
    },
    { prefix: '/v1' },
  );

  return app;
}

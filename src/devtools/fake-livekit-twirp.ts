/**
 * The fake LiveKit server's Twirp wire: errors as LiveKit sends them, one method as a route
 * (decode, check grants, answer), protojson field-name normalisation, HS256 API token checks and
 * the HTTP handler that runs a request in LiveKit's order.
 *
 * Sources it mirrors: livekit/protocol `livekit/*.twirp.go` (routes, `bad_route`, `malformed`,
 * responses with `UseProtoNames` + `EmitUnpopulated`), twitchtv/twirp `errors.go` (codes →
 * HTTP status), livekit/livekit `pkg/service/auth.go` (grants).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { CreateSIPParticipantRequest } from '@livekit/protocol';
import type { RecordedRequest } from './fake-livekit-api.js';

const CLOCK_SKEW_S = 10;
const MAX_BODY_BYTES = 1 << 20;

/** Twirp error codes → HTTP status (twitchtv/twirp `errors.go`). */
const TWIRP_STATUS: Record<string, number> = {
  canceled: 408,
  unknown: 500,
  invalid_argument: 400,
  malformed: 400,
  deadline_exceeded: 408,
  not_found: 404,
  bad_route: 404,
  already_exists: 409,
  permission_denied: 403,
  unauthenticated: 401,
  resource_exhausted: 429,
  failed_precondition: 412,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
};

/** A Twirp error on its way to the client. */
export class TwirpFailure extends Error {
  constructor(
    readonly code: string,
    msg: string,
    readonly meta?: Record<string, string>,
    readonly status = TWIRP_STATUS[code] ?? 500,
  ) {
    super(msg);
  }
}

export type JsonObject = Record<string, unknown>;
/** protobuf-es's `JsonValue`, named through a class so no extra package is imported. */
type ProtoJson = Parameters<typeof CreateSIPParticipantRequest.fromJson>[0];
/** What the normaliser needs from a protobuf-es message class. */
interface FieldLike {
  name: string;
  jsonName: string;
  kind: string;
  repeated: boolean;
  T?: unknown;
  V?: { kind: string; T?: unknown };
}
export interface SchemaLike {
  fields: { list(): readonly FieldLike[] };
}
interface Decoder<T> extends SchemaLike {
  fromJson(json: ProtoJson, options: { ignoreUnknownFields: boolean }): T;
}
export interface Encodable {
  toJson(options: { emitDefaultValues: boolean; useProtoFieldName: boolean }): unknown;
}
export interface Claims {
  video?: { roomAdmin?: unknown; roomCreate?: unknown; room?: unknown };
  sip?: { call?: unknown; admin?: unknown };
  [claim: string]: unknown;
}

/** One Twirp method: decode the body, check grants (a denial message or undefined), answer. */
export interface Route<T> {
  schema: Decoder<T>;
  permit(claims: Claims, req: T): string | undefined;
  handle(req: T): Promise<Encodable>;
}
export interface AnyRoute {
  schema: SchemaLike;
  run(claims: Claims, body: JsonObject): Promise<Encodable>;
}

/** Erases a route's request type behind a closure. */
export function route<T>(r: Route<T>): AnyRoute {
  return {
    schema: r.schema,
    async run(claims, body) {
      let req: T;
      try {
        req = r.schema.fromJson(body as ProtoJson, { ignoreUnknownFields: true });
      } catch (err) {
        throw new TwirpFailure('malformed', `the json request could not be decoded: ${(err as Error).message}`);
      }
      const denied = r.permit(claims, req);
      if (denied !== undefined) throw new TwirpFailure('permission_denied', denied);
      return r.handle(req);
    },
  };
}

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
export const nowS = (): number => Math.floor(Date.now() / 1000);
export const b64url = (s: string): string => Buffer.from(s).toString('base64url');
const ID_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
/** A LiveKit-style id: `prefix` + 12 random characters, e.g. `PA_x8ZkQm2RwT4v`. */
export function newId(prefix: string): string {
  return prefix + Array.from(randomBytes(12), (b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('');
}

/** Whether `T` is a protobuf-es message class (sub-message field type). */
const isSchema = (T: unknown): T is SchemaLike => (typeof T === 'function' || isObject(T)) && 'fields' in T;

/** Renames snake_case (proto) field names to camelCase (json) per the message schema, recursing into sub-messages; map keys and unknown keys stay as sent. */
export function normalise(value: JsonObject, schema: SchemaLike): JsonObject {
  const fields = schema.fields.list();
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    const f = fields.find((x) => x.jsonName === key || x.name === key);
    if (!f) {
      out[key] = v;
      continue;
    }
    const sub = (x: unknown, T: unknown): unknown => (isObject(x) && isSchema(T) ? normalise(x, T) : x);
    if (f.kind === 'message') out[f.jsonName] = f.repeated && Array.isArray(v) ? v.map((x) => sub(x, f.T)) : sub(v, f.T);
    else if (f.kind === 'map' && f.V?.kind === 'message' && isObject(v))
      out[f.jsonName] = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, sub(x, f.V?.T)]));
    else out[f.jsonName] = v;
  }
  return out;
}

/** Verifies an HS256 JWT; returns its claims, or why it was refused. */
export function verifyToken(token: string, apiKey: string, secret: string): Claims | string {
  const parts = token.split('.');
  if (parts.length !== 3) return 'invalid token: not a JWT';
  const [h, p, s] = parts as [string, string, string];
  const parse = (x: string): JsonObject | undefined => {
    try {
      const o: unknown = JSON.parse(Buffer.from(x, 'base64url').toString('utf8'));
      return isObject(o) ? o : undefined;
    } catch {
      return undefined;
    }
  };
  const header = parse(h);
  const claims = parse(p);
  if (!header || !claims) return 'invalid token: undecodable';
  if (header.alg !== 'HS256') return `invalid token: unsupported algorithm ${String(header.alg)}`;
  if (claims.iss !== apiKey) return `invalid API key: ${String(claims.iss)}`;
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  const actual = Buffer.from(s, 'base64url');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return 'invalid token: signature is invalid';
  const now = nowS();
  if (typeof claims.exp !== 'number' || claims.exp + CLOCK_SKEW_S < now) return 'invalid token: token is expired (exp)';
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf - CLOCK_SKEW_S > now))
    return 'invalid token: token is not valid yet (nbf)';
  return claims as Claims;
}

export const sipGrant = (c: Claims) => (isObject(c.sip) ? c.sip : {});
export const videoGrant = (c: Claims) => (isObject(c.video) ? c.video : {});
export const DENIED = 'permissions denied';
export const needSipAdmin = (c: Claims) => (sipGrant(c).admin === true ? undefined : DENIED);
export const needRoomAdmin = (room: string) => (c: Claims) => {
  const v = videoGrant(c);
  return v.roomAdmin === true && v.room === room ? undefined : DENIED;
};

/** Reads a request body as UTF-8, refusing more than {@link MAX_BODY_BYTES}. */
async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What {@link serveTwirp} needs from the server: its key, routes and request log. */
export interface TwirpServer {
  apiKey: string;
  apiSecret: string;
  routes: Record<string, AnyRoute>;
  /** Every request is appended here, in arrival order, before it is answered. */
  requests: RecordedRequest[];
  onRequest?: (request: RecordedRequest, status: number) => void;
}

/** Answers one HTTP request as a LiveKit Twirp server: JSON body, or a Twirp error `{code, msg, meta?}`. */
export async function serveTwirp(req: http.IncomingMessage, res: http.ServerResponse, server: TwirpServer): Promise<void> {
  const send = (status: number, obj: unknown): number => {
    const text = JSON.stringify(obj);
    // Exactly `application/json`: the SDK parses error bodies only for that value (TwirpRPC.ts).
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
    return status;
  };
  const fail = (e: TwirpFailure): number => send(e.status, { code: e.code, msg: e.message, ...(e.meta ? { meta: e.meta } : {}) });
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const m = /^\/twirp\/([\w.]+)\/(\w+)$/.exec(path);
  if (!m) {
    fail(new TwirpFailure('bad_route', `no handler for path "${path}"`));
    return;
  }
  const [, service = '', method = ''] = m;
  const contentType = req.headers['content-type'] ?? '';
  const record: RecordedRequest = { service, method, contentType, grants: {}, body: {}, at: Date.now() };
  server.requests.push(record);
  let status: number;
  try {
    status = send(200, await twirp(req, record, server));
  } catch (err) {
    status = fail(err instanceof TwirpFailure ? err : new TwirpFailure('internal', (err as Error).message));
  }
  server.onRequest?.(record, status);
}

/** Runs one Twirp call in LiveKit's order: auth middleware, route, Content-Type, decode, grants, handler. */
async function twirp(req: http.IncomingMessage, record: RecordedRequest, server: TwirpServer): Promise<unknown> {
  const auth = req.headers.authorization ?? '';
  if (!auth.startsWith('Bearer ')) throw new TwirpFailure('unauthenticated', 'invalid authorization header. Must start with Bearer ');
  const claims = verifyToken(auth.slice('Bearer '.length), server.apiKey, server.apiSecret);
  if (typeof claims === 'string') throw new TwirpFailure('unauthenticated', claims);
  record.grants = claims;
  const r = server.routes[`${record.service}/${record.method}`];
  if (req.method !== 'POST') throw new TwirpFailure('bad_route', `unsupported method "${req.method}" (only POST is allowed)`);
  if (!r) throw new TwirpFailure('bad_route', `no handler for path "${req.url}"`);
  // Twirp answers an unexpected Content-Type with bad_route; this fake speaks JSON only (no application/protobuf).
  if (record.contentType.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
    throw new TwirpFailure('bad_route', `unexpected Content-Type: "${record.contentType}"`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await readBody(req));
  } catch (err) {
    throw new TwirpFailure('malformed', `the json request could not be decoded: ${(err as Error).message}`);
  }
  if (!isObject(raw)) throw new TwirpFailure('malformed', 'the json request could not be decoded: not an object');
  record.body = normalise(raw, r.schema);
  const reply = await r.run(claims, record.body);
  return reply.toJson({ emitDefaultValues: true, useProtoFieldName: true });
}

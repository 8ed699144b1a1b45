/**
 * The fake LiveKit server's webhooks: the event body, the `Authorization` JWT LiveKit signs it
 * with, and delivery (an explicit POST, or fire-and-forget events queued in order).
 *
 * Source it mirrors: livekit/protocol `webhook/url_notifier.go` (`Content-Type:
 * application/webhook+json`, a raw HS256 JWT with the body's `sha256` claim).
 */
import { createHash, createHmac } from 'node:crypto';
import { Room, WebhookEvent, type ParticipantInfo } from '@livekit/protocol';
import type { WebhookDelivery } from './fake-livekit-api.js';
import { b64url, newId, nowS } from './fake-livekit-twirp.js';

const WEBHOOK_TTL_S = 300;
const WEBHOOK_TIMEOUT_MS = 5_000;

/** A room as a webhook event describes it. */
export interface WebhookRoom {
  sid: string;
  name: string;
  creationTime: bigint;
}

/** A webhook event's body (protojson, camelCase) about `participant` in `room`. */
export function eventBody(event: string, room: WebhookRoom, participant: ParticipantInfo): string {
  return JSON.stringify(
    new WebhookEvent({
      event,
      id: newId('EV_'),
      createdAt: BigInt(nowS()),
      participant,
      room: new Room({ sid: room.sid, name: room.name, creationTime: room.creationTime }),
    }).toJson(),
  );
}

/** Signs and delivers the fake's webhooks; `target()` is the URL they go to now (or none). */
export class LiveKitWebhooks {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly apiKey: string,
    private readonly apiSecret: string,
    private readonly target: () => string | undefined,
    private readonly onWebhook?: (delivery: WebhookDelivery) => void,
  ) {}

  /** The `Authorization` header value for `body`: a raw HS256 JWT valid 5 min, claim `sha256`. */
  sign(body: string): string {
    const now = nowS();
    const claims = {
      iss: this.apiKey,
      nbf: now,
      exp: now + WEBHOOK_TTL_S,
      sha256: createHash('sha256').update(body, 'utf8').digest('base64'),
    };
    const unsigned = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
    return `${unsigned}.${createHmac('sha256', this.apiSecret).update(unsigned).digest('base64url')}`;
  }

  /** Queues a webhook to the target URL (if set), in order, without waiting for it. */
  fireAndForget(event: string, body: () => string): void {
    const url = this.target();
    if (!url) return;
    const text = body();
    this.queue = this.queue.then(() =>
      this.post(text, event, url).then(
        () => undefined,
        () => undefined,
      ),
    );
  }

  /** POSTs `body` signed; resolves with any answer, throws when there is no URL or it is unreachable. */
  async post(body: string, event: string, url = this.target()): Promise<{ status: number; body: string }> {
    if (!url) throw new Error('no webhook URL: pass one or set webhookUrl');
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/webhook+json', Authorization: this.sign(body) },
        body,
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
      const reply = { status: res.status, body: await res.text() };
      this.onWebhook?.({ event, url, status: reply.status });
      return reply;
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const error = cause?.code ?? cause?.message ?? (err as Error).message;
      this.onWebhook?.({ event, url, error });
      throw new Error(`webhook ${event} to ${url} failed: ${error}`, { cause: err });
    }
  }

  /** Resolves once every queued webhook has been tried. */
  drained(): Promise<void> {
    return this.queue;
  }
}

/**
 * The daemon's carrier media streams (docs/media.md): one {@link StreamConnection}
 * (stream-connection.ts) per WebSocket of `GET /v1/media/{twilio,exotel,plivo}`. The main
 * thread reads the carrier's first frames up to `start`, settles auth (a stream token in the
 * custom parameters, when the upgrade carried no credentials), asks the media-calls service
 * which call it is, and hands the stream to a media worker; from then on it only relays
 * frames (batched) and answers turn requests through the sessions service. This file accepts
 * the sockets, keeps the attached ones, and ends them at shutdown.
 */
import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import type { CarrierDialect } from '../media/carriers/index.js';
import type { MediaWorkerPool, StreamHandle } from './media-worker/worker-pool.js';
import type { CallRecognizerChoice } from '../adapters/recognizers/recognizer-choice.js';
import type { RecognizerSpec } from '../media/worker-protocol.js';
import { LiveCalls } from './live-calls.js';
import { UnprovenSockets, type UnprovenTicket } from './unproven-sockets.js';
import type { Services } from '../app/index.js';
import { StreamConnection, terminateLater, type MediaStreamsEvents, type StreamLog, type StreamOwner } from './stream-connection.js';

/** Options of {@link MediaStreams}. */
export interface MediaStreamsOptions {
  pool: MediaWorkerPool;
  /**
   * The recogniser of a call in `language` (the agent's) with the stream's custom parameters
   * (src/adapters/recognizers/recognizer-choice.ts; the daemon's composition root builds it).
   */
  recognizerFor: CallRecognizerChoice;
  /** Logger (pino-like). */
  log: StreamLog;
}

/** The live carrier streams of a daemon. */
export class MediaStreams extends EventEmitter<MediaStreamsEvents> implements StreamOwner {
  /** Attached streams by call number, and the sessions still being ended (shutdown waits for them). */
  private readonly live = new LiveCalls<StreamHandle>();
  /** Sockets without credentials still waiting for their `start` (src/daemon/unproven-sockets.ts). */
  private readonly unproven = new UnprovenSockets();
  /** Calls whose stream sent a frame since the last heartbeat. */
  private active = new Set<number>();

  constructor(
    private readonly services: Services,
    private readonly options: MediaStreamsOptions,
  ) {
    super();
  }

  /** Streams attached now. */
  get size(): number {
    return this.live.size;
  }

  /**
   * Serves one upgraded WebSocket. `tenantId` is the tenant its upgrade authenticated, or null
   * when it carried no credentials (the `start` must then carry a valid `stream_token`); such a
   * socket from `origin.address` (the TCP peer) is closed at once with 1013 when too many are
   * waiting for their `start` (`UNPROVEN_LIMITS`, unproven-sockets.ts). `origin.byKey`: it authenticated with an
   * API key, so its call may be labelled a simulation.
   */
  accept(
    socket: WebSocket,
    dialect: CarrierDialect,
    tenantId: string | null,
    queryParams: Record<string, string> = {},
    origin: { byKey?: boolean; address?: string } = {},
  ): void {
    const byKey = origin.byKey === true;
    const address = origin.address ?? 'unknown';
    let ticket: UnprovenTicket | null = null;
    if (tenantId === null) {
      const admitted = this.unproven.admit(address);
      if ('refused' in admitted) {
        socket.on('error', () => undefined);
        socket.close(1013, admitted.refused.slice(0, 120));
        terminateLater(socket);
        this.emit('streamEnded', { callId: null, dialect, reason: 'refused', stats: null });
        return;
      }
      ticket = admitted;
    }
    new StreamConnection(this, socket, dialect, tenantId, queryParams, byKey, ticket);
  }

  /**
   * The calls whose stream sent a frame since the last call of this (the media heartbeat,
   * src/daemon/media-runtime.ts); the set is emptied.
   */
  takeActive(): Set<number> {
    const active = this.active;
    this.active = new Set();
    return active;
  }

  /** @internal: call `n`'s stream sent a frame (one Set insert per frame; written on the heartbeat only). */
  sawMedia(n: number): void {
    this.active.add(n);
  }

  /** Sockets without credentials waiting for their `start` now. */
  get unprovenSize(): number {
    return this.unproven.size;
  }

  /**
   * Hangs up stream call `n` from vagent's side (`POST /v1/calls/{id}/hangup`, a session's
   * `/end`). @returns false when no stream of this daemon carries it.
   */
  hangUp(n: number): boolean {
    return this.live.hangUp(n);
  }

  /** Shutdown: hangs up every stream and waits (at most `timeoutMs`) for their sessions to end. */
  async closeAll(timeoutMs = 3000): Promise<void> {
    await this.live.closeAll(timeoutMs);
  }

  /** @internal */
  get isDraining(): boolean {
    return this.live.draining;
  }

  /** @internal */
  get pool(): MediaWorkerPool {
    return this.options.pool;
  }

  /** @internal */
  get log(): MediaStreamsOptions['log'] {
    return this.options.log;
  }

  /** @internal */
  get svc(): Services {
    return this.services;
  }

  /** @internal */
  register(n: number, handle: StreamHandle): void {
    this.live.set(n, handle);
  }

  /** @internal */
  unregister(n: number): void {
    this.live.delete(n);
  }

  /**
   * @internal: ends call `n`'s session (tracked, so shutdown waits for it); `problem`, when
   * vagent closed the stream for a protocol fault, is recorded as the call's `dial_error`.
   */
  endCall(tenantId: string, n: number, problem: string | null = null): Promise<void> {
    // A call the daemon's stop hung up ended because vagent went away, not its caller.
    const reason = this.live.draining ? 'daemon_restart' : undefined;
    return this.live.track(this.services.media.ended(tenantId, n, problem, null, reason));
  }

  /** @internal: the recogniser spec of a call in `language` with custom parameters `params`. */
  recognizerSpec(language: string, params: Readonly<Record<string, unknown>>): RecognizerSpec {
    try {
      return this.options.recognizerFor(language, params);
    } catch (err) {
      return { kind: 'off', reason: `speech recognition is off for ${JSON.stringify(language)}: ${(err as Error).message}` };
    }
  }
}

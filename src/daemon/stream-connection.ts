/**
 * One carrier WebSocket of `GET /v1/media/{twilio,exotel,plivo}` ({@link StreamConnection}),
 * from its first frame to its end (docs/media.md): the frames before `start` and its deadline,
 * auth by stream token, the call the media-calls service opens for it, the hand-over to a media
 * worker, and the refusals. `MediaStreams` (media-streams.ts) accepts the sockets and
 * keeps the live ones.
 */
import type { WebSocket } from 'ws';
import { CARRIER_MODULES, CarrierProtocolError, type CarrierDialect, type CarrierEvent } from '../media/carriers/index.js';
import type { StopReason } from '../media/transport.js';
import type { MediaWorkerPool, StreamHandle } from './media-worker/worker-pool.js';
import type { RecognizerSpec, StreamEvent, StreamStats } from '../media/worker-protocol.js';
import type { CallSource } from '../domain/calls.js';
import { StreamRefused, type StreamStart } from '../app/media-calls.js';
import { UNPROVEN_LIMITS, type UnprovenTicket } from './unproven-sockets.js';
import type { Services } from '../app/index.js';

/** A finished stream, as the `streamEnded` event reports it. */
export interface StreamEndedInfo {
  callId: string | null;
  dialect: CarrierDialect;
  reason: StopReason | 'refused';
  stats: StreamStats | null;
}

/** Frames a stream may send before its `start`. */
const MAX_FRAMES_BEFORE_START = UNPROVEN_LIMITS.framesBeforeStart;
/** How long a stream may take to send `start`, ms. */
const START_DEADLINE_MS = UNPROVEN_LIMITS.startDeadlineMs;

/** Events: `streamEvent` (call id, event) and `streamEnded` (info), for logs, tests and the bench. */
export interface MediaStreamsEvents {
  streamEvent: [callId: string, event: StreamEvent];
  streamEnded: [info: StreamEndedInfo];
}

/** Logger (pino-like) of the media streams. */
export interface StreamLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** What a {@link StreamConnection} needs of the `MediaStreams` that accepted it. */
export interface StreamOwner {
  readonly isDraining: boolean;
  readonly pool: MediaWorkerPool;
  readonly log: StreamLog;
  readonly svc: Services;
  emit<K extends keyof MediaStreamsEvents>(event: K, ...args: MediaStreamsEvents[K]): boolean;
  sawMedia(n: number): void;
  register(n: number, handle: StreamHandle): void;
  unregister(n: number): void;
  endCall(tenantId: string, n: number, problem?: string | null): Promise<void>;
  recognizerSpec(language: string, params: Readonly<Record<string, unknown>>): RecognizerSpec;
}

/**
 * Who made a stream's call: `simulator` when its `start` carries the custom parameter
 * `vagent_source: simulator` (as `vagent call simulate` sends) and its upgrade authenticated
 * with an API key; `phone` otherwise. A stream authenticated by a carrier's signature or the
 * stream token is a carrier's, whatever its parameters say, so a leaked stream token cannot
 * pass real calls off as simulations (docs/api-decisions.md "Simulated calls").
 */
export function streamSource(params: Readonly<Record<string, string>>, byKey: boolean): CallSource {
  return byKey && params['vagent_source'] === 'simulator' ? 'simulator' : 'phone';
}

/** One carrier WebSocket. */
export class StreamConnection {
  private early: string[] = [];
  private handle: StreamHandle | null = null;
  private socketClosed: number | null = null;
  private n: number | null = null;
  private tenant: string | null;
  private phase: 'awaiting_start' | 'opening' | 'attached' | 'done' = 'awaiting_start';
  /** Why vagent closed this stream after its call opened (a protocol fault), for the call record. */
  private refusal: string | null = null;
  /** Whether the media-calls service is opening this stream's call now. */
  private openInFlight = false;
  private readonly deadline: NodeJS.Timeout;
  /** Bytes received before `start`. */
  private earlyBytes = 0;

  /** `ticket`: the socket's place among the unproven ones (no credentials yet), released once it proves who it is or closes. */
  constructor(
    private readonly owner: StreamOwner,
    private readonly socket: WebSocket,
    private readonly dialect: CarrierDialect,
    tenantId: string | null,
    private readonly queryParams: Record<string, string>,
    private readonly byKey: boolean,
    private ticket: UnprovenTicket | null,
  ) {
    this.tenant = tenantId;
    // Refused on the loop's next check phase, after its poll phase has read what arrived
    // meanwhile: a daemon that was busy when the deadline fell still sees a `start` already sent.
    this.deadline = setTimeout(
      () =>
        setImmediate(() => {
          if (this.phase === 'awaiting_start') this.refuse(1008, `no start event within ${START_DEADLINE_MS / 1000} s`);
        }),
      START_DEADLINE_MS,
    );
    socket.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => this.onFrame(data, isBinary));
    socket.on('close', (code: number) => this.onClose(code));
    socket.on('error', () => undefined);
  }

  private onFrame(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (this.phase === 'done') return;
    if (isBinary) {
      this.refuse(1003, 'binary frames are not part of this protocol; send JSON text frames');
      return;
    }
    if (this.phase !== 'attached' && this.ticket !== null) {
      // Unproven: bound what it holds before anything is decoded.
      this.earlyBytes += Array.isArray(data) ? data.reduce((sum, b) => sum + b.length, 0) : data.byteLength;
      if (this.earlyBytes > UNPROVEN_LIMITS.bytesBeforeStart) {
        this.refuse(1008, `unauthenticated: more than ${UNPROVEN_LIMITS.bytesBeforeStart / 1024} KiB before start`);
        return;
      }
    }
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    if (this.phase === 'attached') {
      this.handle!.push(text);
      this.owner.sawMedia(this.n!);
      return;
    }
    this.early.push(text);
    if (this.phase === 'opening') return;
    let event: CarrierEvent;
    try {
      event = CARRIER_MODULES[this.dialect].parse(text);
    } catch (err) {
      const e = err instanceof CarrierProtocolError ? err : null;
      this.refuse(e?.code === 'oversized' ? 1009 : 1008, e ? e.message : 'malformed frame');
      return;
    }
    if (event.type === 'start') {
      void this.onStart(event);
      return;
    }
    if (event.type !== 'connected' && event.type !== 'ignored') {
      this.refuse(1008, `${this.dialect}: a ${event.type} event before start`);
      return;
    }
    if (this.early.length > MAX_FRAMES_BEFORE_START)
      this.refuse(1008, `${this.dialect}: no start event in the first ${MAX_FRAMES_BEFORE_START} frames`);
  }

  private async onStart(event: Extract<CarrierEvent, { type: 'start' }>): Promise<void> {
    this.phase = 'opening';
    clearTimeout(this.deadline);
    const { svc, log } = this.owner;
    // The URL's query parameters (Exotel, Plivo) under the start event's own custom parameters.
    const params = { ...this.queryParams, ...event.customParameters };
    if (this.tenant === null) {
      this.tenant = svc.carriers.tenantOfStreamToken(params['stream_token']);
      if (this.tenant === null) {
        this.refuse(
          1008,
          "unauthenticated: send Authorization: Bearer <API key>, the carrier's signature, or a valid stream_token parameter",
        );
        return;
      }
    }
    this.releaseTicket();
    if (this.owner.isDraining) {
      this.refuse(1001, 'vagent is stopping');
      return;
    }
    const start: StreamStart = {
      dialect: this.dialect,
      carrierCallId: event.callId,
      from: event.from,
      to: event.to,
      params,
      source: streamSource(params, this.byKey),
    };
    let opened;
    this.openInFlight = true;
    try {
      opened = await svc.media.open(this.tenant, start);
    } catch (err) {
      this.openInFlight = false;
      if (this.refused) {
        // Closed by a frame while the call was being opened, and no call opened after all.
        this.owner.emit('streamEnded', { callId: null, dialect: this.dialect, reason: 'refused', stats: null });
        return;
      }
      const reason = err instanceof StreamRefused ? err.message : 'the call could not be opened';
      if (!(err instanceof StreamRefused)) log.warn({ err, dialect: this.dialect }, 'media stream: could not open the call');
      this.refuse(1008, reason);
      return;
    }
    this.openInFlight = false;
    const n = opened.n;
    this.n = n;
    const tenant = this.tenant;
    const callId = `cl_${n}`;
    log.info({ call_id: callId, dialect: this.dialect, routed_by: opened.routedBy, agent_id: opened.agentId }, 'media stream attached');
    if (this.socketClosed !== null || this.refused) {
      // The caller hung up, or sent a frame that closed the stream, while the call was being opened.
      const refused = this.refused;
      this.phase = 'done';
      void this.owner.endCall(tenant, n, this.refusal);
      this.owner.emit('streamEnded', {
        callId,
        dialect: this.dialect,
        reason: refused ? 'refused' : 'caller-hangup',
        stats: null,
      });
      return;
    }
    const frames = this.early;
    this.early = [];
    this.phase = 'attached';
    this.handle = this.owner.pool.attach(
      this.dialect,
      frames,
      opened.settings,
      this.owner.recognizerSpec(opened.settings.language, params),
      opened.opening,
      {
        send: (out) => {
          if (this.socket.readyState !== this.socket.OPEN) return;
          for (const f of out) this.socket.send(f);
        },
        close: (code, reason) => this.closeSocket(code, reason),
        turn: (request, early) => svc.media.turn(tenant, n, request, early),
        event: (e) => {
          if (e.type === 'protocolError') log.warn({ call_id: callId, code: e.code, message: e.message }, 'media stream: protocol error');
          else if (e.type === 'recordingFailed') log.warn({ call_id: callId, message: e.message }, 'media stream: not recorded');
          else if (e.type === 'sttFallback') {
            log.warn(
              {
                call_id: callId,
                from: e.from,
                to: e.to,
                kind: e.error.kind,
                message: e.error.message,
                primary_skipped: e.primarySkipped,
              },
              e.to
                ? `speech recognition: ${e.from} failed; ${e.to} heard the utterance`
                : `speech recognition: ${e.from} failed and no fallback serves this language`,
            );
          } else if (e.type === 'bargeIn') {
            void svc.media.noteBargeIn(tenant, n, { reason: e.reason, speech_ms: e.speechMs, heard_ms: Math.round(e.heard.heardMs) });
            log.info(
              {
                call_id: callId,
                reason: e.reason,
                speech_ms: e.speechMs,
                decided_after_ms: Math.round(e.atMs - e.speechOnsetAtMs),
                heard_ms: Math.round(e.heard.heardMs),
              },
              'barge-in',
            );
          }
          this.owner.emit('streamEvent', callId, e);
        },
        ended: (reason, cause, stats) => {
          this.phase = 'done';
          this.owner.unregister(n);
          void this.owner.endCall(tenant, n, this.refusal);
          log.info(
            {
              call_id: callId,
              reason,
              cause,
              audio_in_ms: stats.audioInMs,
              utterances: stats.utterances,
              barge_ins: stats.bargeIns,
              frames_sent: stats.framesSent,
              frames_late: stats.framesLate,
              frames_dropped: stats.framesDropped,
              lateness_p99_ms: stats.latenessP99Ms,
            },
            'media stream ended',
          );
          this.owner.emit('streamEnded', { callId, dialect: this.dialect, reason, stats });
          this.closeSocket(1000, 'call ended');
        },
      },
    );
    this.owner.register(n, this.handle);
  }

  /** Whether vagent closed the stream while its call was being opened (the awaited open narrows `phase` for tsc). */
  private get refused(): boolean {
    return this.phase === 'done';
  }

  /** The socket has proven who it is, or is closing: it no longer counts as unproven. */
  private releaseTicket(): void {
    this.ticket?.release();
    this.ticket = null;
  }

  private onClose(code: number): void {
    this.socketClosed = code;
    clearTimeout(this.deadline);
    this.releaseTicket();
    if (this.handle && this.phase === 'attached') this.handle.closed(code);
    else if (this.phase === 'awaiting_start') this.phase = 'done';
  }

  /**
   * Closes the socket with `code` and `reason`. A stream whose call is open (attached, or being
   * opened) records why on the call; an attached one tells its media worker first, so the call
   * ends now rather than when the worker's own timeouts notice the silence.
   */
  private refuse(code: number, reason: string): void {
    clearTimeout(this.deadline);
    this.early = [];
    if (this.phase === 'done') return;
    const was = this.phase;
    this.phase = 'done';
    if (was === 'attached' || this.openInFlight) this.refusal = `the stream was closed (${code}): ${reason}`;
    // A call being opened is ended (and reported) by onStart once it is open.
    if (was === 'attached') this.handle!.closed(code);
    else if (!this.openInFlight) this.owner.emit('streamEnded', { callId: null, dialect: this.dialect, reason: 'refused', stats: null });
    this.closeSocket(code, reason);
    // An unproven socket counts until it is gone (onClose): it gets no 30 s closing handshake.
    if (this.ticket !== null) terminateLater(this.socket);
  }

  private closeSocket(code: number, reason: string): void {
    if (this.socket.readyState === this.socket.CLOSED || this.socket.readyState === this.socket.CLOSING) return;
    try {
      this.socket.close(code, Buffer.byteLength(reason) > 123 ? reason.slice(0, 100) : reason);
    } catch {
      this.socket.terminate();
    }
  }
}

/** How long a refused unproven socket may take to answer our close frame before it is dropped, ms. */
const REFUSED_CLOSE_GRACE_MS = 1_000;

/** Drops `socket` unless it has closed within {@link REFUSED_CLOSE_GRACE_MS} (ws would wait 30 s). */
export function terminateLater(socket: WebSocket): void {
  setTimeout(() => {
    if (socket.readyState !== socket.CLOSED) socket.terminate();
  }, REFUSED_CLOSE_GRACE_MS).unref();
}

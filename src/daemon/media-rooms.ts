/**
 * vagent's media in LiveKit call rooms (docs/media.md "LiveKit rooms"): for
 * each dialled or answered LiveKit call, vagent mints a token for its own participant
 * (`vagent-cl_<N>`) and joins the call's room from a media child process, where the call's
 * media session runs once the phone participant is answered. The main thread only answers the
 * session's turn requests, records the answer, and ends the call.
 *
 * - The call ends on vagent's side (closing line, silence, `POST /v1/calls/{id}/hangup`): the
 *   media leaves the room and the phone participant is removed through LiveKit's RoomService,
 *   which hangs the phone up.
 * - The callee hangs up (the participant leaves): the session ends and the line is `completed`.
 * - The room cannot be joined: the call is hung up at once (nobody is left listening to
 *   silence), its session ends, and `dial_error` and the log say why.
 * - Start-up: calls whose room media died with the previous daemon are hung up and ended.
 */
import { EventEmitter } from 'node:events';
import type { MediaWorkerPool } from './media-worker/worker-pool.js';
import type { RecognizerSpec, StreamEvent, StreamStats } from '../media/worker-protocol.js';
import type { StopReason } from '../media/transport.js';
import type { Services } from '../app/index.js';
import { callRoom } from '../app/call-views.js';
import type { CallRooms, RoomCall } from '../app/telephony-port.js';
import { LiveCalls } from './live-calls.js';

/** Options of {@link MediaRooms}. */
export interface MediaRoomsOptions {
  /** The media child processes that join rooms. */
  pool: MediaWorkerPool;
  /** The recogniser spec of a call in `language` (the agent's) with `params`, the call's context. */
  recognizerSpec(language: string, params: Readonly<Record<string, unknown>>): RecognizerSpec;
  /** How long joining a room may take, ms (default 10 000). */
  connectTimeoutMs?: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** A finished room call, as the `roomEnded` event reports it. */
export interface RoomEndedInfo {
  callId: string;
  reason: StopReason;
  /** Why vagent could not carry the call's audio, or null. */
  problem: string | null;
  stats: StreamStats;
}

/** Events: `roomEvent` (call id, media event) and `roomEnded`, for logs, tests and the bench. */
export interface MediaRoomsEvents {
  roomEvent: [callId: string, event: StreamEvent];
  roomEnded: [info: RoomEndedInfo];
}

/** How long vagent's room token lives, seconds: joining happens within seconds of minting. */
const TOKEN_TTL_S = 600;

/** vagent's presence in LiveKit call rooms. */
export class MediaRooms extends EventEmitter<MediaRoomsEvents> implements CallRooms {
  /** Calls whose room vagent is in (or joining), and the work still ending them. */
  private readonly live = new LiveCalls();
  /** Hang-ups asked for while the join was still being prepared. */
  private readonly early = new Set<number>();

  constructor(
    private readonly services: Services,
    private readonly options: MediaRoomsOptions,
  ) {
    super();
  }

  /** Calls whose room vagent is in (or joining). */
  get size(): number {
    return this.live.size;
  }

  join(call: RoomCall): void {
    if (this.live.draining || this.live.has(call.n)) return;
    this.live.set(call.n, { hangup: () => this.early.add(call.n) });
    void this.live.track(
      this.start(call).catch((err: unknown) => {
        this.options.log.error({ call_id: `cl_${call.n}`, err: (err as Error).message }, "could not start the call's room media");
        this.live.delete(call.n);
      }),
    );
  }

  hangUp(n: number): boolean {
    return this.live.hangUp(n);
  }

  /** The calls whose room vagent is in (or joining) now: alive as long as the daemon is (their media runs in its child processes). */
  liveCalls(): number[] {
    return this.live.ids();
  }

  /** Shutdown: leaves every room (the calls end) and waits at most `timeoutMs`. */
  async closeAll(timeoutMs = 3000): Promise<void> {
    await this.live.closeAll(timeoutMs);
  }

  /**
   * Start-up: hangs up and ends the LiveKit calls whose room media died with the previous
   * daemon (`ringing`/`answered` with the session open). @returns how many.
   */
  async endOrphans(): Promise<number> {
    const { services } = this;
    const orphans = services.media.orphanedRooms();
    for (const o of orphans) {
      try {
        await services.telephony.hangUp(o.room_name, o.direction === 'outbound' ? callRoom(o.id).identity : null);
      } catch {
        // LiveKit unreachable: the call is still ended here; its room empties on LiveKit's own timeouts.
      }
      await services.media.ended(
        o.tenant_id,
        o.id,
        'vagent restarted during the call: its room media was lost',
        services.media.lastSeen(o.id),
        'daemon_restart',
      );
    }
    return orphans.length;
  }

  private async start(call: RoomCall): Promise<void> {
    const { services, options } = this;
    const { n, tenantId, roomName } = call;
    const callId = `cl_${n}`;
    const [opened, token] = await Promise.all([
      services.media.roomCall(tenantId, n),
      services.telephony.roomToken(roomName, `vagent-${callId}`, TOKEN_TTL_S),
    ]);
    const url = services.telephony.url;
    if (url === null) throw new Error('no LiveKit URL is configured');
    let problem: string | null = null;
    const handle = options.pool.attachRoom(
      {
        url,
        token,
        roomName,
        sipIdentity: call.sipIdentity,
        connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      },
      opened.settings,
      options.recognizerSpec(opened.settings.language, opened.context),
      opened.opening,
      {
        turn: (request, early) => services.media.turn(tenantId, n, request, early),
        event: (e) => {
          if (e.type === 'answered') void services.media.roomAnswered(n);
          else if (e.type === 'recordingFailed') options.log.warn({ call_id: callId, message: e.message }, 'media stream: not recorded');
          else if (e.type === 'roomFailed') {
            problem = e.message;
            options.log.error(
              { call_id: callId, room: roomName, err: e.message },
              "vagent could not join the call's LiveKit room; hanging the call up",
            );
          } else if (e.type === 'bargeIn') {
            const heardMs = Math.round(e.heard.heardMs);
            options.log.info({ call_id: callId, reason: e.reason, speech_ms: e.speechMs, heard_ms: heardMs }, 'barge-in');
            void services.media.noteBargeIn(tenantId, n, { reason: e.reason, speech_ms: e.speechMs, heard_ms: heardMs });
          }
          this.emit('roomEvent', callId, e);
        },
        ended: (reason, _cause, stats) => {
          this.live.delete(n);
          void this.live.track(this.finish(call, reason, problem, stats));
        },
      },
    );
    this.live.set(n, handle);
    if (this.early.delete(n) || this.live.draining) handle.hangup();
    options.log.info({ call_id: callId, room: roomName }, "joining the call's LiveKit room");
  }

  /**
   * The media of `call` ended: the phone line is hung up where vagent ended it, then the session
   * ends (a room vagent could not join: the session first, with the problem as `dial_error`).
   */
  private async finish(call: RoomCall, reason: StopReason, problem: string | null, stats: StreamStats): Promise<void> {
    const { services, options } = this;
    // A room vagent could not carry: the session's end and the reason are recorded first, so
    // the `participant_left` webhook the removal below causes cannot end the call without it.
    if (problem !== null) await services.media.ended(call.tenantId, call.n, problem);
    if (reason !== 'caller-hangup') {
      // vagent ended it (or lost the room): the phone participant is removed so the line drops.
      try {
        await services.telephony.hangUp(call.roomName, call.sipIdentity);
      } catch (err) {
        options.log.warn({ call_id: `cl_${call.n}`, err: (err as Error).message }, 'could not hang the phone line up in LiveKit');
      }
    }
    // A call the daemon's stop hung up ended because vagent went away, not its caller.
    if (problem === null) await services.media.ended(call.tenantId, call.n, null, null, this.live.draining ? 'daemon_restart' : undefined);
    options.log.info(
      {
        call_id: `cl_${call.n}`,
        reason,
        audio_in_ms: stats.audioInMs,
        utterances: stats.utterances,
        barge_ins: stats.bargeIns,
        frames_sent: stats.framesSent,
        lateness_p99_ms: stats.latenessP99Ms,
      },
      'room media ended',
    );
    this.emit('roomEnded', { callId: `cl_${call.n}`, reason, problem, stats });
  }
}

/**
 * Calls carried by a carrier's WebSocket media stream (docs/media.md
 * "4. Which agent answers"): which call and agent a stream's `start` names, the call record it
 * gets, its turns through the sessions service, and its end.
 *
 * A stream names its call by the custom parameter `call_id` (a call prepared with
 * `POST /v1/calls` without `dial`: the stream attaches to that call's session, whose opening is
 * already synthesised), else `agent_id`, else the called number: the tenant's number record →
 * its bound agent → the tenant's inbound routing webhook, exactly as a LiveKit inbound call.
 * Either way a call record exists with `direction`, `transport` and the caller and called
 * numbers, and `GET /v1/calls` shows it while it runs.
 *
 * Over 400 lines: a stream call's whole life (open, attach, turns, end, crash recovery) reads in
 * one place, each use case in its three phases (docs/unit-of-work.md).
 */
import { ApiError } from '../domain/errors.js';
import type { CallSource } from '../domain/calls.js';
import { isE164 } from '../domain/e164.js';
import type { CarrierDialect } from '../media/carriers/types.js';
import type { ExpectationKind } from '../media/endpointing.js';
import type { TurnRequest } from '../media/call-session-port.js';
import type { ClipRef, ReplyData, StreamSettings } from '../media/worker-protocol.js';
import type { AgentService } from './agents.js';
import type { BudgetService } from './budget.js';
import type { CallService } from './calls.js';
import type { ClipView } from './clips.js';
import type { Principal, ServiceDeps } from './context.js';
import type { InboundService } from './inbound.js';
import type { RecordingService } from './recordings.js';
import type { SessionService } from './sessions.js';
import type { SpeechPort } from './speech-port.js';
import { INTERNAL, type Committed } from './unit-of-work.js';
import { moveDialTx } from './call-events.js';
import { EarlyClip } from './early-reply.js';
import type { EndReason } from '../domain/events.js';
import type { TurnResult } from '../contract/index.js';

/** What a stream's `start` says about its call (plain data from the carrier parser). */
export interface StreamStart {
  dialect: CarrierDialect;
  /** The carrier's call id (Twilio `callSid`, Exotel `call_sid`, Plivo `callId`). */
  carrierCallId: string;
  /** Caller and called numbers as the carrier sent them (Exotel), if any. */
  from?: string | undefined;
  to?: string | undefined;
  /** The stream's custom parameters (Twilio `customParameters`, Exotel `custom_parameters`, Plivo `extra_headers`). */
  params: Record<string, string>;
  /** Who made the call, recorded on it (src/daemon/stream-connection.ts `streamSource`); default `phone`. */
  source?: CallSource;
}

/** A stream's call, ready for its media session. */
export interface OpenedStream {
  /** The call's number N (`cl_<N>`, session `se_<N>`). */
  n: number;
  tenantId: string;
  agentId: string;
  /** How the stream named its call. */
  routedBy: 'call_id' | 'agent_id' | 'number' | 'webhook';
  settings: StreamSettings;
  opening: ReplyData;
}

/** Why a stream gets no call: the socket closes with 1008 and this reason (no session opened). */
export class StreamRefused extends Error {
  override readonly name = 'StreamRefused';
}

/** Defaults of an agent's `media:` settings (docs/agents.md "Phone calls"). */
export const MEDIA_DEFAULTS = {
  barge_in: true,
  no_speech_timeout_ms: 6000,
  max_silence_reprompts: 2,
  max_call_duration_s: 1800,
} as const;

/** Longest wait after the closing line has played before vagent hangs up the phone line, ms. */
export const PHONE_CLOSE_GRACE_MAX_MS = 2000;

/** Recogniser deadline after the end of speech, ms. */
const RECOGNIZER_TIMEOUT_MS = 3000;

/**
 * Between two records of which calls are alive (their media flowing), ms: a call orphaned by a
 * crash ends at most this long before it really went silent, for one write per interval
 * however many calls there are (never a write per audio frame).
 */
export const ACTIVITY_HEARTBEAT_MS = 5_000;

/** The carrier streams' use cases. */
export class MediaCallService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly agents: AgentService,
    private readonly sessions: SessionService,
    private readonly calls: Pick<CallService, 'insertCallTx'>,
    private readonly budget: BudgetService,
    private readonly inbound: InboundService,
    private readonly speech: SpeechPort,
    private readonly recordings: RecordingService,
  ) {}

  /**
   * Finds or creates the call stream `start` of tenant `tenantId` names, records the carrier
   * transport on it, and returns what its media session needs.
   * @throws StreamRefused with a reason a carrier's log may show (no personal data)
   */
  async open(tenantId: string, start: StreamStart): Promise<OpenedStream> {
    const principal = streamPrincipal(tenantId, start);
    const p = start.params;
    if (p['call_id'] !== undefined) return this.attachPrepared(principal, start, p['call_id']);
    const to = pickNumber(p['to'], start.to);
    const from = pickNumber(p['from'], start.from);
    let agentId = p['agent_id'] ?? null;
    let routedBy: OpenedStream['routedBy'] = 'agent_id';
    if (agentId === null) {
      if (to === null)
        throw new StreamRefused("no call_id, agent_id or called number in the stream's start: add a custom parameter call_id or agent_id");
      const number = this.deps.repos.numbers.get(tenantId, to);
      if (!number) throw new StreamRefused('the called number is not registered (vagent number add), and no call_id or agent_id was given');
      agentId = number.agent_id;
      routedBy = 'number';
      const tenant = this.deps.repos.tenants.getTenant(tenantId);
      if (tenant?.inbound_webhook_url) {
        const chosen = await this.inbound.agentFromWebhook(
          tenantId,
          tenant.inbound_webhook_url,
          {
            type: 'inbound_call',
            event_id: `${start.dialect}:${start.carrierCallId}`,
            call: { to, from, carrier: start.dialect, carrier_call_id: start.carrierCallId },
            number: { id: number.id, number: number.number, label: number.label, agent_id: number.agent_id },
          },
          `${start.dialect}:${start.carrierCallId}`,
        );
        if (chosen) {
          agentId = chosen;
          routedBy = 'webhook';
        }
      }
      if (!agentId) throw new StreamRefused('the called number has no agent bound (vagent number bind)');
    }
    let agentRow;
    try {
      agentRow = this.agents.resolve(principal, agentId);
    } catch {
      throw new StreamRefused('agent_id names no agent of this tenant');
    }
    const agent = this.agents.compiledRevision(agentRow.digest);
    const direction = agent.def.direction;
    if (this.deps.repos.calls.byProviderCallId(start.carrierCallId)) throw new StreamRefused('this carrier call already has a stream');
    if (direction === 'outbound') {
      try {
        this.budget.check(tenantId);
      } catch (err) {
        throw new StreamRefused(err instanceof ApiError ? err.message : "the tenant's budget refused the call");
      }
    }
    let n = 0;
    let openingClips: ClipView[] = [];
    try {
      const prepared = await this.sessions.prepareOpen(principal, {
        agent_id: agentId,
        customer_phone: direction === 'inbound' ? from : to,
        context: { call: { direction, to, from, transport: start.dialect } },
      });
      const opened = await this.deps.uow.write((tx) => {
        const view = this.sessions.openTx(tx, prepared, true);
        this.calls.insertCallTx(tx, {
          n: prepared.session.id,
          tenantId,
          agentId,
          direction,
          to: to ?? '',
          from,
          dialStatus: 'answered',
          trunkId: null,
          roomName: null,
          providerCallId: start.carrierCallId,
          attempt: null,
          answeredAt: this.deps.nowS(),
          transport: start.dialect,
          source: start.source ?? 'phone',
          reserveUntil: null,
        });
        return view;
      });
      this.sessions.afterOpen(prepared);
      n = prepared.session.id;
      openingClips = opened.opening.clips;
    } catch (err) {
      throw new StreamRefused(err instanceof ApiError ? `the agent cannot take this call: ${err.message}` : 'the call could not be opened');
    }
    return this.opened(principal, n, agentId, routedBy, openingClips);
  }

  private async attachPrepared(principal: Principal, start: StreamStart, callId: string): Promise<OpenedStream> {
    const m = /^cl_([1-9][0-9]{0,15})$/.exec(callId);
    const row = m ? this.deps.repos.calls.get(Number(m[1])) : undefined;
    if (!row || row.tenant_id !== principal.tenantId) throw new StreamRefused('call_id names no call of this tenant');
    if (row.session_status === 'ended') throw new StreamRefused('the call named by call_id has ended');
    if (row.transport !== null || row.dial_status !== 'not_dialled') {
      throw new StreamRefused(
        'the call named by call_id is not a prepared call waiting for its stream (it was dialled or already has one)',
      );
    }
    const n = row.id;
    const moved = await this.deps.uow.write((tx) => {
      const at = this.deps.nowS();
      const attached = this.deps.repos.calls.attachTransport(n, start.dialect, start.carrierCallId || null, at, start.source ?? 'phone');
      if (attached) {
        const data = { dial_status: 'answered', answered_at: at, transport: start.dialect };
        this.deps.events.appendTx(tx, { tenantId: principal.tenantId, type: 'call.answered', callId: n, sessionId: n, data });
      }
      return attached;
    });
    if (!moved) throw new StreamRefused('the call named by call_id already has a stream');
    return this.opened(principal, n, row.agent_id, 'call_id', await this.sessions.lastClips(principal, `se_${n}`));
  }

  private opened(principal: Principal, n: number, agentId: string, routedBy: OpenedStream['routedBy'], clips: ClipView[]): OpenedStream {
    const hints = this.sessions.mediaHints(principal, `se_${n}`);
    const media = hints.media;
    return {
      n,
      tenantId: principal.tenantId,
      agentId,
      routedBy,
      settings: {
        language: hints.language,
        bargeIn: media.barge_in,
        noSpeechMs: media.no_speech_timeout_ms,
        maxReprompts: media.max_silence_reprompts,
        maxCallDurationMs: media.max_call_duration_s * 1000,
        eouSilence: media.end_of_utterance_ms ?? {},
        // The agent's close-grace keeps a session listening after its closing line; on a phone
        // line the caller has heard the goodbye, so the line drops soon after it.
        closeGraceMs: Math.min(hints.closeGraceMs, PHONE_CLOSE_GRACE_MAX_MS),
        recognizerTimeoutMs: RECOGNIZER_TIMEOUT_MS,
        recording: this.recordings.settingFor(principal.tenantId, n, hints.recording),
      },
      opening: { clips: clips.map((c) => this.clipRef(c)), ended: hints.ended || hints.closing, expectation: hints.expectation },
    };
  }

  /**
   * What the media session of LiveKit call `n` needs (docs/media.md "LiveKit rooms"): its settings and opening
   * (already synthesised when the call was placed or answered), and the call's context (an
   * object; empty when it has none), which the recogniser choice may read as a carrier stream's
   * custom parameters.
   * @throws StreamRefused when the call is unknown or its session has ended
   */
  async roomCall(tenantId: string, n: number): Promise<OpenedStream & { context: Record<string, unknown> }> {
    const row = this.deps.repos.calls.get(n);
    if (!row || row.tenant_id !== tenantId) throw new StreamRefused(`no call cl_${n}`);
    if (row.session_status === 'ended') throw new StreamRefused(`call cl_${n} has ended`);
    const principal = mediaPrincipal(tenantId);
    const opened = this.opened(principal, n, row.agent_id, 'call_id', await this.sessions.lastClips(principal, `se_${n}`));
    let context: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(this.deps.repos.sessions.get(n)?.context ?? '{}');
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) context = parsed as Record<string, unknown>;
    } catch {
      // No usable context: none.
    }
    return { ...opened, context };
  }

  /**
   * LiveKit call `n` was answered (its phone participant's `sip.callStatus` turned `active`, as
   * seen from inside the room): a ringing line becomes `answered`. Never throws.
   */
  async roomAnswered(n: number): Promise<void> {
    try {
      await this.deps.uow.write((tx) => {
        const call = this.deps.repos.calls.get(n);
        if (call) moveDialTx(tx, this.deps, call.tenant_id, n, 'answered', { answered_at: this.deps.nowS() });
      });
    } catch {
      // The store is closing: the call stays as it was.
    }
  }

  /**
   * The caller spoke over the agent on call `n` and the agent stopped (`call.barge_in`, with why,
   * how long the caller had spoken and how much of the clip they heard, ms). Never throws.
   */
  noteBargeIn(tenantId: string, n: number, data: { reason: string; speech_ms: number; heard_ms: number }): Promise<void> {
    return this.noteEvent(tenantId, n, 'call.barge_in', data);
  }

  /** Records an event of call `n` that changes nothing else, in a write of its own. Never throws. */
  private async noteEvent(tenantId: string, n: number, type: 'call.barge_in' | 'call.dtmf', data: Record<string, unknown>): Promise<void> {
    try {
      await this.deps.uow.write((tx) => this.deps.events.appendTx(tx, { tenantId, type, callId: n, sessionId: n, data }));
    } catch {
      // The store is closing: the call goes on without the event.
    }
  }

  /**
   * One turn of stream call `n` (the media session's request) through the sessions service,
   * marked as a phone turn (`phone: true`: the engine speaks as on a call, e.g. a `digits` step
   * asked again offers the keypad; docs/api-decisions.md). With `early`, a speech turn's streamed
   * model reply has its first sentence handed to `early` as a clip while the turn runs, and the
   * reply's clips then hold only the rest (src/app/early-reply.ts; docs/media.md "The early clip").
   * @throws ApiError from the sessions service (the media session then ends the call)
   */
  async turn(tenantId: string, n: number, request: TurnRequest, early?: (clip: ClipRef) => void): Promise<ReplyData> {
    const principal = mediaPrincipal(tenantId);
    const sessionId = `se_${n}`;
    let done: Committed<TurnResult>;
    const first = early && request.kind === 'speech' ? new EarlyClip(this.speech, early) : null;
    switch (request.kind) {
      case 'speech': {
        const t = request.telemetry;
        done = await this.sessions.turn(
          principal,
          sessionId,
          {
            text: request.text,
            stt_provider: t.stt_provider,
            stt_ms: Math.round(t.stt_ms),
            stt_confidence: t.stt_confidence === null ? null : clamp01(t.stt_confidence),
            stt_unmeasured: t.stt_confidence === null,
            silence_ms: Math.round(t.silence_ms),
            stt_audio_ms: Math.round(t.audio_ms),
            phone: true,
          },
          INTERNAL,
          first?.sink,
        );
        break;
      }
      case 'dtmf':
        await this.noteEvent(tenantId, n, 'call.dtmf', { digits: request.text });
        done = await this.sessions.turn(principal, sessionId, { text: request.text, stt_provider: 'dtmf', phone: true }, INTERNAL);
        break;
      case 'silence':
        done = await this.sessions.eventTurn(
          principal,
          sessionId,
          { kind: request.giveUp ? 'give_up' : 'silence', attempt: request.attempt, phone: true },
          INTERNAL,
        );
        break;
      case 'failed':
        done = await this.sessions.eventTurn(
          principal,
          sessionId,
          {
            kind: 'not_heard',
            stt_provider: request.telemetry.stt_provider,
            stt_audio_ms: Math.round(request.telemetry.audio_ms),
            phone: true,
          },
          INTERNAL,
        );
        break;
      case 'max_duration':
        done = await this.sessions.eventTurn(principal, sessionId, { kind: 'max_duration', phone: true }, INTERNAL);
        break;
    }
    // No request, no key: the step always runs (never a replay).
    if (done.replayed) throw new Error(`turn of cl_${n} was replayed without a key`);
    const view = done.value;
    const hints = view.ended ? null : this.sessions.mediaHints(principal, sessionId);
    // The closing line said (close-grace begins): on the phone, vagent hangs up after it plays.
    const ended = view.ended || hints?.closing === true;
    return {
      clips: first ? await first.finish(view.clips, (c) => this.clipRef(c)) : view.clips.map((c) => this.clipRef(c)),
      ended,
      expectation: hints?.expectation ?? ('free' as ExpectationKind),
    };
  }

  /**
   * Call `n`'s media ended (the caller hung up, the closing played, the stream or room broke):
   * its session ends (summary, costs final) and its line becomes `completed`, with `problem`
   * recorded as the call's `dial_error` when vagent could not carry its audio (a LiveKit room it
   * could not join, media lost to a restart). Never throws.
   */
  async ended(
    tenantId: string,
    n: number,
    problem: string | null = null,
    endedAt: number | null = null,
    endReason: EndReason = problem === null ? 'caller_hung_up' : 'media_failed',
  ): Promise<void> {
    try {
      const ending = await this.sessions.beginEnd(mediaPrincipal(tenantId), `se_${n}`, {
        lineHandled: true,
        endReason,
        ...(endedAt === null ? {} : { endedAt }),
      });
      let committed = false;
      try {
        await this.deps.uow.write((tx) => {
          this.deps.repos.calls.moveDial(n, 'completed', problem === null ? {} : { dial_error: problem.slice(0, 500) });
          this.sessions.endTx(tx, ending);
        });
        committed = true;
      } finally {
        this.sessions.afterEnd(ending, committed);
      }
    } catch {
      // Already ended and purged, or the store is closing: nothing more to record.
    }
  }

  /**
   * Start-up: ends the calls whose carrier stream was live when the daemon last stopped (a
   * crash, `kill -9`): their sockets died with it, so they are completed, their sessions ended
   * and their costs final, never left `in_progress`. @returns how many.
   */
  async endOrphanedStreams(): Promise<number> {
    const orphans = this.deps.repos.calls.orphanedStreams();
    for (const o of orphans) await this.ended(o.tenant_id, o.id, null, this.lastSeen(o.id), 'daemon_restart');
    return orphans.length;
  }

  /**
   * When call `n` was last seen alive (epoch seconds: its last media heartbeat, turn, answer or
   * start; CallRepo.lastSeen): the end of a call orphaned by a crash, so its duration does not
   * include the outage. Null when there is no such call.
   */
  lastSeen(n: number): number | null {
    return this.deps.repos.calls.lastSeen(n);
  }

  /**
   * The media heartbeat: records that calls `ns` were alive now (one write for all of them;
   * src/daemon/media-runtime.ts calls it every {@link ACTIVITY_HEARTBEAT_MS}). Never throws.
   */
  async noteActivity(ns: Iterable<number>): Promise<void> {
    const ids = [...ns];
    if (ids.length === 0) return;
    const at = this.deps.nowS();
    try {
      await this.deps.uow.write(() => this.deps.repos.calls.touch(ids, at));
    } catch {
      // The store is closing: the next start ends these calls at their previous sign of life.
    }
  }

  /**
   * LiveKit calls still on the line (`ringing`/`answered`) with their session open: at start-up,
   * calls whose room media died with the previous daemon.
   */
  orphanedRooms(): Array<{ id: number; tenant_id: string; room_name: string; direction: string }> {
    return this.deps.repos.calls.orphanedRooms();
  }

  private clipRef(c: ClipView): ClipRef {
    const name = c.audio_url ? /\/v1\/audio\/([^/?#]+)\.wav$/.exec(c.audio_url)?.[1] : undefined;
    const flags = c as ClipView & { barge_in?: boolean; is_readback?: boolean; is_confirm_prompt?: boolean };
    return {
      file: name ? this.speech.fileOf(name) : null,
      text: c.text,
      bargeIn: flags.barge_in !== false,
      asksConfirmation: flags.is_readback === true || flags.is_confirm_prompt === true,
    };
  }
}

/** The principal (the API key holder) a stream's writes are recorded under (audit: the carrier stream). */
function streamPrincipal(tenantId: string, start: StreamStart): Principal {
  return {
    tenantId,
    keyId: `media-${start.dialect}`,
    requestId: `${start.dialect}:${start.carrierCallId}`.slice(0, 120),
    method: 'GET',
    route: `/v1/media/${start.dialect}`,
  };
}

function mediaPrincipal(tenantId: string): Principal {
  return { tenantId, keyId: 'media', requestId: 'media', method: 'GET', route: '/v1/media' };
}

/** The first of `values` that is an E.164 number, else null. */
function pickNumber(...values: Array<string | undefined>): string | null {
  for (const v of values) if (v !== undefined && isE164(v.trim())) return v.trim();
  return null;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

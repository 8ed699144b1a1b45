/**
 * Calls (docs/calls.md; docs/api-decisions.md "Calls", "Errors", "Costs"; the contract in
 * src/contract/calls.ts).
 *
 * `POST /v1/calls` prepares a call — a session of an outbound agent and a call record,
 * nothing sent to a carrier — or, with `dial: true`, places it through the telephony provider.
 * Checks run in the order, so a request fails on its first problem: body (the route),
 * agent, budget; then, when dialling, telephony configured, trunk resolution, caller ID, the
 * dial itself.
 *
 * Exactly once: a dial runs only after its `Idempotency-Key` claim is committed (the route is
 * claim-first when dialling), and the call row is committed as `dialling` before the provider
 * is contacted. A retry of an acknowledged dial replays the stored response. A dial whose
 * outcome is unknown (a timeout, the daemon killed mid-dial) stays recorded under its attempt
 * (the scope's opaque `DialAttempt`), and a retry of that attempt gets `dial_outcome_unknown`
 * instead of a second ring.
 *
 * Every call row — outbound, LiveKit inbound, carrier stream — is written by
 * {@link CallService.insertCallTx}.
 *
 * Over 400 lines: the dial reads top-down through its checks, its durable `dialling` row, the
 * provider's answer and the three ways a dial ends; the views live in call-views.ts.
 */
import { DIAL_LIMITS, type CallSource, type DialStatus } from '../domain/calls.js';
import { CALLS_CURSOR } from '../domain/cursor.js';
import { ApiError } from '../domain/errors.js';
import { shortId } from '../domain/ids.js';
import type { CallPlacement } from '../contract/index.js';
import type { CallTransport } from '../store/repos/calls.js';
import { scoped } from './access.js';
import {
  callMetadata,
  callRoom,
  callStatusView,
  earlierAttemptError,
  outcomeUnknown,
  parseCallId,
  type CallStatusView,
} from './call-views.js';
import type { AgentService } from './agents.js';
import type { BudgetService } from './budget.js';
import type { Principal, ServiceDeps } from './context.js';
import type { SessionService } from './sessions.js';
import { attemptOf, type Committed, type DialAttempt, type Scope, type Tx } from './unit-of-work.js';
import { dialEndReason, moveDialTx } from './call-events.js';
import type { CallRooms, DialTrunk, TelephonyPort } from './telephony-port.js';
import type { TrunkService } from './trunks.js';
import type { PlaceCallInput } from '../contract/calls.js';

/** A validated `POST /v1/calls` body (the contract's, src/contract/calls.ts). Numbers are E.164. */
export type { PlaceCallInput };

/** The placement response (`CallPlacementSchema` in src/contract/calls.ts). */
export type { CallPlacement };

/** A page of calls (`GET /v1/calls`). */
export interface CallPage {
  data: CallStatusView[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Options of {@link CallService.place}. */
export interface PlaceOptions {
  /** Told of a failed hang-up of a call hung up while it was being dialled (for the log). */
  onHangupError?: (err: unknown, callId: string) => void;
}

/** A new call row (see {@link CallService.insertCallTx}). Numbers are E.164; times epoch seconds. */
export interface NewCall {
  /** The number N of the call's session `se_<N>` (the call is `cl_<N>`). */
  n: number;
  tenantId: string;
  agentId: string;
  direction: 'outbound' | 'inbound';
  to: string;
  from: string | null;
  dialStatus: DialStatus;
  trunkId: string | null;
  roomName: string | null;
  providerCallId: string | null;
  /** The dial attempt it was placed under (a retry of it never dials again), or null. */
  attempt: DialAttempt | null;
  answeredAt: number | null;
  /** What carries its audio; default `livekit` with a `roomName`, else none yet. */
  transport: CallTransport | null;
  source?: CallSource;
  /**
   * Until when the tenant's budget holds a reservation for the call (epoch seconds: its
   * longest possible end), checked and reserved in the same write; null: no reservation.
   */
  reserveUntil: number | null;
}

/** Call use cases. */
export class CallService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly agents: AgentService,
    private readonly sessions: SessionService,
    private readonly trunks: TrunkService,
    private readonly budget: BudgetService,
    private readonly telephony: TelephonyPort,
    private readonly lines: { watchAnswer(n: number, roomName: string, identity: string, ringingTimeoutS: number): void },
  ) {}

  private rooms: CallRooms | null = null;
  /** Where call N's recording is served, or null when it has none (see {@link useRecordings}). */
  private recordingUrl: (n: number) => string | null = () => null;

  /** Shows each call's recording in its view: `urlOf(N)` is where call N's is served, or null. */
  useRecordings(urlOf: (n: number) => string | null): void {
    this.recordingUrl = urlOf;
  }

  /** Connects vagent's media in LiveKit rooms: dialled calls' rooms are joined from then on. */
  setCallRooms(rooms: CallRooms): void {
    this.rooms = rooms;
  }

  /**
   * Prepares or places a call (`POST /v1/calls`; docs/calls.md "Placing calls").
   * @throws ApiError workflow_not_found, not_found ("Workflow not outbound." for an inbound
   *         agent), rate_limit_exceeded; when dialling also telephony_not_configured,
   *         invalid_request (no `trunk_id` with zero or several trunks), trunk_not_found,
   *         caller_id_not_on_trunk, dial_failed (the provider refused; SIP status in the
   *         message), dial_outcome_unknown (no answer from the provider; not re-dialled).
   */
  async place(principal: Principal, input: PlaceCallInput, scope: Scope, options: PlaceOptions = {}): Promise<Committed<CallPlacement>> {
    // An attempt an earlier dial was placed under (its outcome unknown, or the carrier refused
    // it after it may have rung): before anything else, so nothing hides that attempt — and a
    // retry never dials again.
    const attempt = attemptOf(scope);
    if (attempt !== null) {
      const earlier = this.deps.repos.calls.byIdempotencyKey(principal.tenantId, attempt.id);
      if (earlier) throw earlierAttemptError(earlier, attempt);
    }
    const agentRow = this.agents.resolve(principal, input.agent_id);
    const agent = this.agents.compiledRevision(agentRow.digest);
    if (agent.def.direction !== 'outbound') throw new ApiError('not_found', 'Workflow not outbound.', { param: 'agent_id' });
    this.budget.check(principal.tenantId);
    if (input.dial === true) return this.dial(principal, input, scope, attempt, options);

    const from = input.from ?? null;
    const prepared = await this.sessions.prepareOpen(principal, this.sessionInput(input));
    const done = await this.deps.uow.run(scope, (tx): CallPlacement => {
      const opened = this.sessions.openTx(tx, prepared, true);
      const n = prepared.session.id;
      this.insertCallTx(tx, {
        ...this.outboundCall(principal, n, opened.created_at, input),
        dialStatus: 'not_dialled',
        from,
        trunkId: null,
        roomName: null,
        attempt: null,
      });
      return {
        call_id: `cl_${n}`,
        session_id: opened.session_id,
        agent_id: agentRow.id,
        to: input.to,
        from,
        idempotent: scope.idempotency !== null,
        status: 'prepared',
        dial_required: true,
      };
    });
    if (!done.replayed) this.sessions.afterOpen(prepared);
    return done;
  }

  private async dial(
    principal: Principal,
    input: PlaceCallInput,
    scope: Scope,
    attempt: DialAttempt | null,
    options: PlaceOptions,
  ): Promise<Committed<CallPlacement>> {
    if (!this.telephony.configured) {
      throw new ApiError(
        'telephony_not_configured',
        'dial is true but no telephony provider is configured: set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET for vagent serve (or leave dial unset to prepare the call only)',
        { param: 'dial' },
      );
    }
    const trunk = this.resolveTrunk(principal, input.trunk_id ?? null);
    const numbers = JSON.parse(trunk.numbers) as string[];
    const from = input.from ?? null;
    if (from !== null && !numbers.includes(from)) {
      throw new ApiError(
        'caller_id_not_on_trunk',
        `from ${shortId(from)} is not one of trunk ${trunk.id}'s caller-ID numbers (${numbers.length === 0 ? 'it has none' : numbers.join(', ')})`,
        { param: 'from' },
      );
    }
    // The caller ID presented: `from`, else the trunk's first number. An inline trunk needs
    // one (LiveKit refuses "trunk outbound number must be set"); a provider trunk has its own.
    let callerId = from;
    if (callerId === null && !trunk.provider_trunk_id) {
      if (numbers.length === 0) {
        throw new ApiError(
          'invalid_request',
          `from is required when dialling through trunk ${trunk.id}: it has no caller-ID numbers (pass from, or register numbers on the trunk)`,
          { param: 'from' },
        );
      }
      callerId = numbers[0]!;
    }
    let dialTrunk: DialTrunk;
    if (trunk.provider_trunk_id) {
      dialTrunk = { kind: 'provider', providerTrunkId: trunk.provider_trunk_id };
    } else {
      const creds = this.trunks.credentialsOf(trunk);
      dialTrunk = {
        kind: 'inline',
        hostname: trunk.address,
        username: creds?.username ?? null,
        password: creds?.password ?? null,
      };
    }

    // The session and the call (as `dialling`) are durable before the provider hears of it.
    const prepared = await this.sessions.prepareOpen(principal, this.sessionInput(input));
    const { session_id: sessionId } = await this.deps.uow.write((tx) => {
      const opened = this.sessions.openTx(tx, prepared, true);
      const n = prepared.session.id;
      this.insertCallTx(tx, {
        ...this.outboundCall(principal, n, opened.created_at, input),
        dialStatus: 'dialling',
        from: callerId,
        trunkId: trunk.id,
        roomName: callRoom(n).roomName,
        attempt,
      });
      return opened;
    });
    this.sessions.afterOpen(prepared);
    const n = prepared.session.id;
    const { roomName, identity } = callRoom(n);
    const metadata = callMetadata(n, principal.tenantId);
    // vagent joins the room first (LiveKit creates it on the join), so its voice is published
    // when the callee answers; the media session starts on the answer. Joining runs in the
    // background and never stops the call: a room that cannot be joined ends it politely.
    this.rooms?.join({ n, tenantId: principal.tenantId, roomName, sipIdentity: identity });
    const result = await this.telephony.dial({
      to: input.to,
      from: callerId,
      trunk: dialTrunk,
      roomName,
      participantIdentity: identity,
      participantName: input.customer_name ?? input.to,
      metadata,
      ringingTimeoutS: input.ringing_timeout_s ?? DIAL_LIMITS.ringing_timeout_s.default,
      maxCallDurationS: input.max_call_duration_s ?? DIAL_LIMITS.max_call_duration_s.default,
    });

    if (result.kind === 'rejected') {
      // The call is recorded as failed and its session ended (its reservation released). When
      // LiveKit refused the request itself nothing rang, and the key is freed so a retry places
      // the call again (5xx is not stored). When the carrier answered with a SIP failure the
      // phone may have rung (no answer, busy): the key stays on the call, and a retry under it
      // gets this failure again instead of a second ring.
      const carrierReached = result.sipStatus !== null;
      const endReason = dialEndReason(result.sipStatus);
      const ending = await this.sessions.beginEnd(principal, sessionId, { lineHandled: true, endReason });
      let committed = false;
      try {
        await this.deps.uow.write((tx) => {
          const m = { provider_call_id: null, dial_error: result.message, idempotency_key: carrierReached ? (attempt?.id ?? null) : null };
          moveDialTx(tx, this.deps, principal.tenantId, n, 'failed', m, { end_reason: endReason, sip_status: result.sipStatus });
          this.sessions.endTx(tx, ending);
        });
        committed = true;
      } finally {
        this.sessions.afterEnd(ending, committed);
      }
      this.rooms?.hangUp(n);
      throw new ApiError('dial_failed', `dial of cl_${n} failed: ${result.message}`);
    }
    if (result.kind === 'unknown') {
      await this.deps.uow.write(() =>
        this.deps.repos.calls.moveDial(n, 'unknown', {
          provider_call_id: null,
          dial_error: result.message,
          idempotency_key: attempt?.id ?? null,
        }),
      );
      throw outcomeUnknown({ id: n, dial_error: result.message });
    }

    // Answered when the dial waited for the callee (livekit.wait_until_answered), else ringing;
    // a webhook or a hang-up that settled the call first keeps it where it is.
    const answeredAt = result.answered ? this.deps.nowS() : undefined;
    let settled: DialStatus | undefined;
    const done = await this.deps.uow.run(scope, (tx): CallPlacement => {
      const calls = this.deps.repos.calls;
      moveDialTx(tx, this.deps, principal.tenantId, n, result.answered ? 'answered' : 'ringing', {
        provider_call_id: result.sipCallId,
        ...(answeredAt ? { answered_at: answeredAt } : {}),
      });
      const row = calls.get(n)!;
      settled = row.dial_status;
      return {
        call_id: `cl_${n}`,
        session_id: sessionId,
        agent_id: input.agent_id,
        to: input.to,
        from,
        idempotent: scope.idempotency !== null,
        status: 'ringing',
        dial_required: false,
        room_name: roomName,
        provider_call_id: result.sipCallId,
        trunk_id: trunk.id,
        dial_status: row.dial_status,
        answered_at: row.answered_at,
      };
    });
    // Hung up while LiveKit was still dialling: the phone participant may have joined after
    // that hang-up looked for it, so it is removed once more (best effort; the call is over).
    if (settled === 'completed') {
      try {
        await this.telephony.hangUp(roomName, identity);
      } catch (err) {
        options.onHangupError?.(err, `cl_${n}`);
      }
    }
    // Dialled without waiting for the answer: LiveKit sends no webhook when the callee picks
    // up, so the call is watched until it is answered, gone, or could no longer ring.
    if (settled === 'ringing')
      this.lines.watchAnswer(n, roomName, identity, input.ringing_timeout_s ?? DIAL_LIMITS.ringing_timeout_s.default);
    return done;
  }

  /** The trunk a dial uses: `trunk_id`, or the tenant's only trunk. */
  private resolveTrunk(principal: Principal, trunkId: string | null) {
    if (trunkId !== null) return this.trunks.resolve(principal, trunkId);
    const all = this.deps.repos.trunks.list(principal.tenantId);
    if (all.length !== 1) {
      throw new ApiError(
        'invalid_request',
        all.length === 0
          ? 'trunk_id is required when dialling: this tenant has no trunk (add one with POST /v1/trunks or vagent trunk add)'
          : `trunk_id is required when dialling: this tenant has ${all.length} trunks (see GET /v1/trunks)`,
        { param: 'trunk_id' },
      );
    }
    return all[0]!;
  }

  private sessionInput(input: PlaceCallInput) {
    return {
      agent_id: input.agent_id,
      context: input.context ?? null,
      customer_name: input.customer_name ?? null,
      customer_phone: input.to,
      title: input.title ?? null,
    };
  }

  /** The fields every outbound call `cl_<n>` placed by `POST /v1/calls` shares, opened at `openedAt` (epoch seconds). */
  private outboundCall(principal: Principal, n: number, openedAt: number, input: PlaceCallInput) {
    return {
      n,
      tenantId: principal.tenantId,
      agentId: input.agent_id,
      direction: 'outbound' as const,
      to: input.to,
      providerCallId: null,
      answeredAt: null,
      transport: null,
      reserveUntil: openedAt + (input.max_call_duration_s ?? DIAL_LIMITS.max_call_duration_s.default),
    };
  }

  /**
   * Writes call `cl_<n>` of session `se_<n>` (the session written first, in the same step):
   * every call row — placed, dialled, LiveKit inbound, carrier stream — is written here. With
   * `reserveUntil` the tenant's budget is checked and a reservation held in the same write.
   * Records `call.created` (and `call.answered` for a call written answered: inbound).
   * @throws ApiError rate_limit_exceeded (the budget refused the reservation; nothing is kept).
   */
  insertCallTx(tx: Tx, call: NewCall): void {
    const reserved = call.reserveUntil === null ? 0 : this.budget.reserveTx(call.tenantId);
    this.deps.repos.calls.insert({
      id: call.n,
      tenant_id: call.tenantId,
      agent_id: call.agentId,
      direction: call.direction,
      to_number: call.to,
      from_number: call.from,
      dial_status: call.dialStatus,
      trunk_id: call.trunkId,
      room_name: call.roomName,
      provider_call_id: call.providerCallId,
      dial_error: null,
      idempotency_key: call.attempt?.id ?? null,
      idempotency_print: call.attempt?.request ?? null,
      reserved_micro: reserved,
      answered_at: call.answeredAt,
      transport: call.transport ?? (call.roomName !== null ? 'livekit' : null),
      reserve_until: call.reserveUntil ?? 0,
      ...(call.source ? { source: call.source } : {}),
    });
    const parties = { direction: call.direction, from: call.from, to: call.to, agent_id: call.agentId, source: call.source ?? 'phone' };
    const subject = { tenantId: call.tenantId, callId: call.n, sessionId: call.n };
    this.deps.events.appendTx(tx, { ...subject, type: 'call.created', data: { ...parties, dial_status: call.dialStatus } });
    if (call.dialStatus === 'answered')
      this.deps.events.appendTx(tx, { ...subject, type: 'call.answered', data: { dial_status: 'answered', answered_at: call.answeredAt } });
  }

  /**
   * Call status (`GET /v1/calls/{call_id}`; docs/calls.md "Call status").
   * @throws ApiError session_not_found for a malformed id (lookup is keyed by session);
   *         not_found for a missing or (in enforce) foreign call.
   */
  get(principal: Principal, callId: string): CallStatusView {
    const n = parseCallId(callId);
    const row = scoped(this.deps, principal, this.deps.repos.calls.get(n), callId);
    if (!row) throw new ApiError('not_found', `no call ${shortId(callId)}`, { param: 'call_id' });
    return callStatusView(row, row.transport === null ? null : this.recordingUrl(row.id));
  }

  /**
   * The caller's calls, newest first (extension `GET /v1/calls`).
   * @param status `in_progress`, `completed` or null for all.
   * @param cursor `next_cursor` of the previous page, or null.
   * @param limit 1–100.
   * @throws ApiError invalid_request for a cursor this daemon did not issue.
   */
  list(
    principal: Principal,
    status: 'in_progress' | 'completed' | null,
    cursor: string | null,
    limit: number,
    source: CallSource | null = null,
  ): CallPage {
    const before = cursor === null ? Number.MAX_SAFE_INTEGER : CALLS_CURSOR.parse(cursor);
    const rows = this.deps.repos.calls.list(
      principal.tenantId,
      status === null ? null : status === 'completed' ? 'ended' : 'open',
      before,
      limit + 1,
      source,
    );
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    return {
      data: page.map((row) => callStatusView(row, row.transport === null ? null : this.recordingUrl(row.id))),
      has_more: hasMore,
      next_cursor: hasMore ? CALLS_CURSOR.encode(page[page.length - 1]!.seq) : null,
    };
  }

  /** Start-up: dials left in flight by a stopped daemon become `unknown` (never re-dialled). */
  recoverInterruptedDials(): number {
    return this.deps.repos.store.writeNow(() => this.deps.repos.calls.markInterruptedDials());
  }
}

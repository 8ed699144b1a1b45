/**
 * Inbound calls and call ends from LiveKit webhooks (docs/calls.md "Inbound calls";
 * LiveKit's webhook documentation).
 *
 * - {@link InboundService.receive}: the webhook's signature is verified over the raw body,
 *   an event worth acting on is recorded durably (deduplicated by event name and
 *   `sip.callID`, since delivery is at-least-once), and only then acknowledged. Processing
 *   runs after the acknowledgement; events recorded but not processed when the daemon
 *   stopped are processed at the next start.
 * - A SIP participant joining through a dispatch rule (`sip.ruleID` set) is an inbound call:
 *   the dialled number (`sip.trunkPhoneNumber`) finds the number record and its bound agent,
 *   the tenant's routing webhook may name another agent, and a session opens with
 *   `customer_phone` = the caller (`sip.phoneNumber`) beside an inbound call record.
 * - A SIP participant leaving ends its call's session; its line becomes `completed`, or
 *   `failed` when an outbound call never connected.
 * - Any webhook showing vagent's outbound SIP participant with `sip.callStatus: active` marks
 *   the call answered. LiveKit sends no webhook when that attribute changes (its
 *   `participant_joined` comes while the call is still `dialing`), so this is a second source
 *   beside the dial's own answer (`waitUntilAnswered`); it acts on whatever event carries it.
 * - Every change of a call's line goes through the transition table of domain/calls.ts: a
 *   report that comes late (an answer after the hang-up) changes nothing.
 * - Unknown or unbound numbers are logged (masked) and counted; nothing throws out of here.
 *
 * Over 400 lines: one webhook event's path (record, schedule, route, open or end) reads in one
 * place; splitting it would scatter the order the events of one call must keep.
 */
import { isE164, maskNumber } from '../domain/e164.js';
import { isAgentId } from '../domain/ids.js';
import type { CallRow, TelephonyEventRow } from '../store/index.js';
import type { Principal, ServiceDeps } from './context.js';
import { dialEndReason, moveDialTx } from './call-events.js';
import type { EventInput } from './events.js';
import type { CredentialBox } from './secrets.js';
import type { CallService } from './calls.js';
import type { SessionService } from './sessions.js';
import { MalformedWebhookError, type CallRooms, type TelephonyEvent, type TelephonyPort } from './telephony-port.js';

/** Calls a tenant's routing webhook; resolves with the response's JSON object. Throws on any failure. */
export type RoutingWebhookCall = (url: string, payload: unknown, secret: string, eventId: string) => Promise<{ body: unknown }>;

/** Where log lines go (no caller numbers in clear). */
export interface InboundLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** What became of one webhook delivery. */
export type ReceiveOutcome = { recorded: true; duplicate: boolean; event: string } | { recorded: false; event: string; reason: string };

/**
 * A webhook whose signature does not verify (→ 401). A signed body that is not an event is a
 * `MalformedWebhookError` (→ 400); any other failure of `receive` is the daemon's (→ 5xx,
 * LiveKit retries).
 */
export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

/** What processing one recorded event came to: its final state and outcome (counted, stored). */
/** What became of a telephony event; `event`: one to record with it (`inbound.unrouted`). */
type EventOutcome = { state: 'done' | 'ignored' | 'failed'; outcome: string; event?: EventInput };

/** Counters since start (the database keeps the all-time ones). */
export type InboundCounters = Record<string, number>;

/** Inbound routing and call-end handling. */
export class InboundService {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly counters: InboundCounters = {};
  private idle: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly sessions: SessionService,
    private readonly calls: Pick<CallService, 'insertCallTx'>,
    private readonly telephony: TelephonyPort,
    private readonly credentials: CredentialBox,
    private readonly routingWebhook: RoutingWebhookCall,
    private readonly log: InboundLog,
  ) {}

  private rooms: CallRooms | null = null;

  /** Connects vagent's media in LiveKit rooms: inbound calls' rooms are joined from then on. */
  setCallRooms(rooms: CallRooms): void {
    this.rooms = rooms;
  }

  /**
   * Verifies and records one webhook delivery, then schedules its processing.
   * @throws WebhookSignatureError when the signature does not verify (the message says why);
   *         MalformedWebhookError when it verifies but the body is not an event;
   *         the store's error when the event cannot be recorded (so it is not acknowledged).
   */
  async receive(rawBody: string, authorization: string | undefined): Promise<ReceiveOutcome> {
    let ev: TelephonyEvent;
    try {
      ev = await this.telephony.verifyWebhook(rawBody, authorization);
    } catch (err) {
      if (err instanceof MalformedWebhookError) throw err;
      throw new WebhookSignatureError(err instanceof Error ? err.message.slice(0, 200) : 'invalid signature');
    }
    const p = ev.participant;
    if (!p?.sip) return { recorded: false, event: ev.event, reason: 'not about a SIP participant' };
    const kind = eventKind(ev.event, p.attributes);
    if (kind === null) {
      return { recorded: false, event: ev.event, reason: 'not a SIP participant joining, answering or leaving' };
    }
    const callKey = p.attributes['sip.callID'] || `${ev.room?.name ?? ''}/${p.identity}`;
    // One answer per call, whichever event carried it first.
    const eventKey = kind === 'sip_answered' ? `answered:${callKey}` : `${ev.event}:${callKey}`;
    const payload = JSON.stringify(ev);
    const seq = await this.deps.uow.write(() => this.deps.repos.telephonyEvents.insert(eventKey, kind, payload, this.deps.nowS()));
    if (seq === null) {
      this.count('duplicate_delivery');
      return { recorded: true, duplicate: true, event: ev.event };
    }
    this.schedule(callKey, { seq, event_key: eventKey, kind, payload });
    return { recorded: true, duplicate: false, event: ev.event };
  }

  /** Start-up: processes events recorded but not processed by the previous run. Returns how many. */
  resumePending(): number {
    const rows = this.deps.repos.telephonyEvents.pending();
    for (const row of rows) {
      const ev = JSON.parse(row.payload) as TelephonyEvent;
      this.schedule(ev.participant?.attributes['sip.callID'] || row.event_key, row);
    }
    return rows.length;
  }

  /** Resolves when every scheduled event has been processed (tests, shutdown). */
  async settled(): Promise<void> {
    for (;;) {
      const current = this.idle;
      await current;
      if (current === this.idle) return;
    }
  }

  /**
   * Counts one webhook refused before it could be verified (`reason`, e.g. LiveKit not
   * configured) in the since-start counters. @returns the count so far, this one included.
   */
  countRefusal(reason: string): number {
    this.count(reason);
    return this.counters[reason]!;
  }

  /** Counts since start, and all-time counts by outcome from the database. */
  counts(): { since_start: InboundCounters; recorded: Record<string, number> } {
    return { since_start: { ...this.counters }, recorded: this.deps.repos.telephonyEvents.counts() };
  }

  /** Events of one call run in order (a hang-up never overtakes its join). */
  private schedule(callKey: string, row: Pick<TelephonyEventRow, 'seq' | 'event_key' | 'kind' | 'payload'>): void {
    const prev = this.chains.get(callKey) ?? Promise.resolve();
    const next = prev
      .then(() => this.process(row))
      .catch((err: unknown) => {
        this.log.warn({ err: errText(err), event_key: row.event_key }, 'telephony event processing failed');
      });
    this.chains.set(callKey, next);
    this.idle = Promise.all([this.idle, next]).then(() => undefined);
    void next.then(() => {
      if (this.chains.get(callKey) === next) this.chains.delete(callKey);
    });
  }

  private async process(row: Pick<TelephonyEventRow, 'seq' | 'event_key' | 'kind' | 'payload'>): Promise<void> {
    const ev = JSON.parse(row.payload) as TelephonyEvent;
    let outcome: EventOutcome;
    try {
      outcome =
        row.kind === 'inbound_call'
          ? await this.inboundCall(ev, row.seq)
          : row.kind === 'sip_answered'
            ? await this.answered(ev, row.seq)
            : await this.participantLeft(ev, row.seq);
    } catch (err) {
      outcome = { state: 'failed', outcome: 'error' };
      this.log.warn({ err: errText(err), event_key: row.event_key }, 'telephony event failed');
    }
    this.count(outcome.outcome);
    // `done` events were finished inside their own write; the rest are marked here.
    if (outcome.state !== 'done') {
      const { event } = outcome;
      await this.deps.uow.write((tx) => {
        this.deps.repos.telephonyEvents.finish(row.seq, outcome.state, outcome.outcome, this.deps.nowS());
        if (event) this.deps.events.appendTx(tx, event);
      });
    }
  }

  private async inboundCall(ev: TelephonyEvent, eventSeq: number): Promise<EventOutcome> {
    const attrs = ev.participant!.attributes;
    const to = attrs['sip.trunkPhoneNumber'] ?? '';
    const fromRaw = attrs['sip.phoneNumber'] ?? '';
    const from = isE164(fromRaw) ? fromRaw : null;
    const callId = attrs['sip.callID'] ?? '';
    const room = ev.room?.name ?? '';
    if (!isE164(to)) {
      this.log.warn({ event_id: ev.id }, 'inbound call without a dialled number (is hidePhoneNumber set on the dispatch rule?)');
      return { state: 'ignored', outcome: 'no_called_number' };
    }
    if (callId && this.deps.repos.calls.byProviderCallId(callId)) return { state: 'ignored', outcome: 'already_answered' };
    const records = this.deps.repos.numbers.everyTenant(to);
    const number = records[0];
    if (!number) {
      this.log.warn(
        { to: maskNumber(to), event_id: ev.id },
        'inbound call to a number vagent does not know (register it: vagent number add)',
      );
      return { state: 'ignored', outcome: 'unknown_number' };
    }
    // Numbers are unique per tenant only: a DID two tenants registered cannot say whose call
    // this is, and answering for either could hand one tenant's callers to the other.
    if (records.length > 1) {
      this.log.warn(
        { to: maskNumber(to), tenants: records.map((r) => r.tenant_id) },
        'inbound call to a number registered by several tenants; not answered: remove it from all but its owner (vagent number rm)',
      );
      return { state: 'ignored', outcome: 'ambiguous_number' };
    }
    const tenantId = number.tenant_id;
    let agentId = number.agent_id;
    let routedBy = 'number';
    const tenant = this.deps.repos.tenants.getTenant(tenantId);
    if (tenant?.inbound_webhook_url) {
      const chosen = await this.agentFromWebhook(
        tenantId,
        tenant.inbound_webhook_url,
        {
          type: 'inbound_call',
          event_id: ev.id,
          call: { to, from, sip_call_id: callId || null, room_name: room || null },
          number: { id: number.id, number: number.number, label: number.label, agent_id: number.agent_id },
        },
        ev.id,
      );
      if (chosen) {
        agentId = chosen;
        routedBy = 'webhook';
      }
    }
    if (!agentId) {
      this.log.warn({ to: maskNumber(to), tenant: tenantId }, 'inbound call to a number with no agent bound (vagent number bind)');
      const data = { to, from, reason: 'no agent bound to the number', number_id: number.id };
      return { state: 'ignored', outcome: 'unbound_number', event: { tenantId, type: 'inbound.unrouted', data } };
    }
    const principal = systemPrincipal(tenantId, ev.id);
    let callN = 0;
    try {
      const prepared = await this.sessions.prepareOpen(principal, {
        agent_id: agentId,
        customer_phone: from,
        context: { call: { direction: 'inbound', to, from } },
      });
      await this.deps.uow.write((tx) => {
        this.sessions.openTx(tx, prepared, true);
        callN = prepared.session.id;
        this.calls.insertCallTx(tx, {
          n: callN,
          tenantId,
          agentId,
          direction: 'inbound',
          to,
          from,
          dialStatus: 'answered',
          trunkId: number.trunk_id,
          roomName: room || null,
          providerCallId: callId || null,
          attempt: null,
          answeredAt: this.deps.nowS(),
          transport: 'livekit',
          reserveUntil: null,
        });
        this.deps.repos.telephonyEvents.finish(eventSeq, 'done', 'session_opened', this.deps.nowS());
      });
      this.sessions.afterOpen(prepared);
    } catch (err) {
      this.log.warn(
        { to: maskNumber(to), tenant: tenantId, agent_id: agentId, err: errText(err) },
        'inbound call: could not open a session',
      );
      return { state: 'failed', outcome: 'agent_unavailable' };
    }
    this.log.info(
      { call_id: `cl_${callN}`, tenant: tenantId, agent_id: agentId, routed_by: routedBy, to: maskNumber(to) },
      'inbound call answered',
    );
    // vagent joins the room; LiveKit answers the caller once vagent subscribes to its audio.
    if (room && this.telephony.configured)
      this.rooms?.join({ n: callN, tenantId, roomName: room, sipIdentity: ev.participant!.identity || null });
    return { state: 'done', outcome: 'session_opened' };
  }

  /**
   * The agent the tenant's routing webhook names for an inbound call (LiveKit or a carrier
   * stream), or null to keep the number's bound one. Never throws: a failed or odd answer is
   * logged and counted.
   */
  async agentFromWebhook(tenantId: string, url: string, payload: Record<string, unknown>, eventId: string): Promise<string | null> {
    const sealed = this.deps.repos.tenants.webhookSecretSealed(tenantId);
    if (!sealed) {
      this.log.warn({ tenant: tenantId }, 'inbound webhook has no signing secret; set it again with vagent admin tenant set');
      return null;
    }
    let body: unknown;
    try {
      const secret = this.credentials.openText(sealed, tenantId, 'inbound_webhook');
      ({ body } = await this.routingWebhook(url, payload, secret, eventId));
    } catch (err) {
      this.count('routing_webhook_failed');
      this.log.warn({ tenant: tenantId, err: errText(err) }, "inbound routing webhook failed; using the number's bound agent");
      return null;
    }
    const chosen = (body as { agent_id?: unknown } | null)?.agent_id;
    if (chosen === undefined || chosen === null) return null;
    if (typeof chosen !== 'string' || !isAgentId(chosen) || !this.deps.repos.agents.get(tenantId, chosen)) {
      this.count('routing_webhook_bad_agent');
      this.log.warn(
        { tenant: tenantId, agent_id: typeof chosen === 'string' ? chosen.slice(0, 80) : typeof chosen },
        "inbound routing webhook named an agent this tenant does not have; using the number's bound agent",
      );
      return null;
    }
    return chosen;
  }

  /** The call a SIP participant event is about: by LiveKit's call id, else (a dial) by identity and room. */
  private callOf(ev: TelephonyEvent): CallRow | undefined {
    const p = ev.participant!;
    const callId = p.attributes['sip.callID'] ?? '';
    const call = callId ? this.deps.repos.calls.byProviderCallId(callId) : undefined;
    if (call) return call;
    // A dial's participant is known by its identity and room before LiveKit's call id is
    // recorded (a callee who refuses at once can be reported first).
    const m = /^sip-cl_([1-9][0-9]{0,15})$/.exec(p.identity);
    if (!m || !ev.room?.name) return undefined;
    const row = this.deps.repos.calls.get(Number(m[1]));
    return row && row.direction === 'outbound' && row.room_name !== null && row.room_name === ev.room.name ? row : undefined;
  }

  /** vagent's outbound SIP participant reported `active`: the callee answered. */
  private async answered(ev: TelephonyEvent, eventSeq: number): Promise<EventOutcome> {
    const call = this.callOf(ev);
    if (!call) return { state: 'ignored', outcome: 'unknown_call' };
    const sipCallId = ev.participant!.attributes['sip.callID'] || null;
    const moved = await this.deps.uow.write((tx) => {
      const answered = moveDialTx(tx, this.deps, call.tenant_id, call.id, 'answered', {
        answered_at: this.deps.nowS(),
        provider_call_id: call.provider_call_id ?? sipCallId,
      });
      this.deps.repos.telephonyEvents.finish(eventSeq, 'done', answered ? 'call_answered' : 'answer_too_late', this.deps.nowS());
      return answered;
    });
    if (moved) this.log.info({ call_id: `cl_${call.id}` }, 'outbound call answered');
    return { state: 'done', outcome: moved ? 'call_answered' : 'answer_too_late' };
  }

  private async participantLeft(ev: TelephonyEvent, eventSeq: number): Promise<EventOutcome> {
    const p = ev.participant!;
    const call = this.callOf(ev);
    if (!call) return { state: 'ignored', outcome: 'unknown_call' };
    const session = this.deps.repos.sessions.get(call.id);
    if (!session || session.status === 'ended') {
      // The session ended first (its line is gone now, whoever ended it).
      await this.deps.uow.write(() => this.deps.repos.calls.moveDial(call.id, 'completed'));
      return { state: 'ignored', outcome: 'already_ended' };
    }
    // An outbound call that never connected: LiveKit says why (dialled without waiting for the answer).
    const reason = p.disconnectReason ?? null;
    const notConnected =
      call.direction === 'outbound' &&
      call.dial_status !== 'answered' &&
      reason !== null &&
      NOT_CONNECTED.has(reason) &&
      (p.attributes['sip.callStatus'] ?? 'dialing') !== 'active';
    const outcome = notConnected ? 'dial_failed' : 'session_ended';
    const endReason = notConnected ? dialEndReason(null, reason) : 'caller_hung_up';
    const ending = await this.sessions.beginEnd(systemPrincipal(call.tenant_id, ev.id), `se_${call.id}`, { lineHandled: true, endReason });
    let committed = false;
    try {
      await this.deps.uow.write((tx) => {
        if (notConnected) {
          const m = { dial_error: `the call did not connect: ${NOT_CONNECTED.get(reason!)} (${reason})` };
          moveDialTx(tx, this.deps, call.tenant_id, call.id, 'failed', m, { end_reason: endReason });
        } else {
          this.deps.repos.calls.moveDial(call.id, 'completed');
        }
        this.sessions.endTx(tx, ending);
        this.deps.repos.telephonyEvents.finish(eventSeq, 'done', outcome, this.deps.nowS());
      });
      committed = true;
    } finally {
      this.sessions.afterEnd(ending, committed);
    }
    this.log.info(
      { call_id: `cl_${call.id}`, reason },
      notConnected ? 'outbound call did not connect' : 'call ended: the phone participant left',
    );
    return { state: 'done', outcome };
  }

  private count(outcome: string): void {
    this.counters[outcome] = (this.counters[outcome] ?? 0) + 1;
  }
}

/** Disconnect reasons of a phone participant that mean the call never connected. */
const NOT_CONNECTED = new Map([
  ['USER_REJECTED', 'the callee rejected it (busy or declined)'],
  ['USER_UNAVAILABLE', 'the callee did not answer or is unreachable'],
  ['SIP_TRUNK_FAILURE', 'the carrier trunk failed'],
]);

/**
 * What a SIP participant event is to vagent: an inbound call (joined through a dispatch rule),
 * an outbound call answered (vagent's participant shown `active` by any event but its
 * leaving), a participant leaving, or nothing (null).
 */
function eventKind(event: string, attributes: Record<string, string>): 'inbound_call' | 'sip_answered' | 'sip_left' | null {
  if (event === 'participant_left') return 'sip_left';
  const inbound = (attributes['sip.ruleID'] ?? '') !== '';
  if (inbound) return event === 'participant_joined' ? 'inbound_call' : null;
  return attributes['sip.callStatus'] === 'active' ? 'sip_answered' : null;
}

/** The principal (the API key holder) the webhook acts as within a tenant. */
function systemPrincipal(tenantId: string, eventId: string): Principal {
  return {
    tenantId,
    keyId: 'livekit-webhook',
    requestId: eventId || 'livekit-webhook',
    method: 'POST',
    route: '/v1/telephony/livekit/webhook',
  };
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

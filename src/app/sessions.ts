/**
 * Conversation sessions (docs/api-decisions.md "Sessions", "Costs"; the contract in
 * src/contract/sessions.ts; docs/architecture.md "A text turn").
 *
 * A turn runs under a per-session lock: the engine (pure) decides the reply, the clips get
 * their audio (cache, or live synthesis), and the new state, the turn row and the stored
 * idempotent response commit in one durable transaction, the unit of work's step
 * (docs/unit-of-work.md); memory follows only once that step has committed.
 * Open sessions stay in memory, with a small window of recently ended ones;
 * an ended session beyond that window is read back from the database when asked for (its
 * detail, `/end` again, a refused turn), and the database is the truth after a restart.
 *
 * Over 400 lines: each use case reads top-down in its three phases (prepare, the write step,
 * after; docs/unit-of-work.md), and the open and end phases are public because the call use
 * cases compose them. The memory, the types and the turn's metering live beside it
 * (session-memory.ts, session-types.ts, turn-record.ts).
 */
import { ApiError } from '../domain/errors.js';
import { SESSIONS_CURSOR } from '../domain/cursor.js';
import type { SessionEndResult, SessionListItem, SessionOpened, TurnResult } from '../contract/index.js';
import { newSessionNumber } from '../domain/ids.js';
import { costView, totalMicro, type CostMicro } from '../domain/money.js';
import { buildSummary } from '../engine/summary.js';
import { graceLapsed, openingClips, runEventTurn, runTurn, type LlmAssist, type TurnEventKind, type TurnOutput } from '../engine/turn.js';
import { mediaHintsOf } from '../engine/media-hints.js';
import { initialState, type EngineState } from '../engine/state.js';
import { withContextDefaults } from '../engine/context-needs.js';
import { mediaSettingsOf } from '../domain/agent.js';
import type { Pricing } from '../config/pricing.js';
import type { SessionRow } from '../store/index.js';
import type { AgentService } from './agents.js';
import { meterClip, renderClips, spokenTextOf, type ClipView } from './clips.js';
import type { Principal, ServiceDeps } from './context.js';
import type { Committed, Scope, Tx } from './unit-of-work.js';
import { emptyMetrics, sessionListItem, type SessionMetrics } from './session-model.js';
import { meterTurn, stateView, sttAudioMsOf } from './turn-record.js';
import { runLlmStep, type LlmCall } from './llm-step.js';
import { earlyPlan, FirstSentenceWatch, type EarlySpeech, type FirstSentenceSink } from './early-reply.js';
import { notFound, parseSessionId, pinOwner, SessionMemory } from './session-memory.js';
import {
  DEFAULT_MAX_ENDED_CACHED,
  DEFAULT_MAX_OPEN_CACHED,
  type EndOptions,
  type LiveSession,
  type OpenSessionInput,
  type PreparedSession,
  type SessionCacheSizes,
  type SessionDetailView,
  type SessionEnding,
  type SessionMediaHints,
  type SessionServiceOptions,
  type Summary,
} from './session-types.js';
import type { SpeechPort } from './speech-port.js';
import { referenceTime, requireSessionValues } from './session-values.js';
import { detailViewOf } from './session-detail.js';
import { renderOpening } from './opening-speech.js';
import { appendEndEventsTx, sessionOpenedEvent, sessionTurnEvent } from './lifecycle-events.js';
import type { EndReason } from '../domain/events.js';
import {
  checkEvent,
  checkSttAudio,
  type MediaTurnFields,
  type SessionEventInput,
  type SttTelemetry,
  type TurnInputBody,
} from './turn-input.js';

/** Session use cases. */
export class SessionService {
  /** The sessions held in memory, and their locks. */
  private readonly memory: SessionMemory;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly agents: AgentService,
    private readonly speech: SpeechPort,
    private readonly pricing: Pricing,
    private readonly options: SessionServiceOptions,
  ) {
    this.memory = new SessionMemory(deps, agents, speech, {
      maxCached: options.maxCached ?? DEFAULT_MAX_OPEN_CACHED,
      maxEndedCached: options.maxEndedCached ?? DEFAULT_MAX_ENDED_CACHED,
    });
  }

  /**
   * Opens a session (`POST /v1/sessions` ≡ `POST /v1/agents/{id}/load`).
   * Every way a session opens comes through here (agent load, `POST /v1/calls` prepare or
   * dial, an inbound call), so none opens without what its agent speaks: the context gets the
   * agent's `context_defaults`, then {@link requireSessionValues} checks the rest.
   * @throws ApiError workflow_not_found (malformed agent id), not_found (missing agent),
   *         invalid_request (`context.now` not an ISO 8601 time; a `required_context` key or
   *         `customer_name` the agent speaks is missing or empty, param `context.<key>` or
   *         `customer_name`), rate_limit_exceeded (the live synthesis the open needs would pass
   *         the tenant's budget; docs/api-decisions.md "Costs").
   */
  async open(principal: Principal, input: OpenSessionInput, scope: Scope): Promise<Committed<SessionOpened>> {
    const prepared = await this.prepareOpen(principal, input);
    const done = await this.deps.uow.run(scope, (tx) => this.openTx(tx, prepared));
    if (!done.replayed) this.afterOpen(prepared);
    return done;
  }

  /**
   * The prepare phase of {@link open}: the agent resolved, the context checked, the opening's
   * audio rendered (with a priced voice, the session's own prompts too) and what that cost
   * metered (src/app/opening-speech.ts). Nothing is written.
   * @throws ApiError as {@link open}.
   */
  async prepareOpen(principal: Principal, input: OpenSessionInput): Promise<PreparedSession> {
    const agentRow = this.agents.resolve(principal, input.agent_id);
    const agent = this.agents.compiledRevision(agentRow.digest);
    const context = withContextDefaults(agent.def, input.context ?? {});
    const refMs = referenceTime(context, this.deps.nowS() * 1000);
    requireSessionValues(agent.def, { customer_name: input.customer_name ?? null, context });
    const vars = { customer_name: input.customer_name ?? null, context };
    const opening = openingClips(agent, vars);
    const voice = this.agents.voiceOf(agent);
    const { audioBaseUrl, onSpeechError, budget } = this.options;
    const deps = { speech: this.speech, pricing: this.pricing, audioBaseUrl: audioBaseUrl(), onSpeechError, budget };
    const spoken = await renderOpening(deps, principal.tenantId, agent, vars, voice, opening);
    const clips: ClipView[] = spoken.rendered.clips.map((c, i) =>
      Object.assign(c, { display_order: i, requires_user_input: opening[i]!.requires_user_input }),
    );
    const state = initialState(agent);
    state.last_clips = opening;
    const view: SessionOpened = {
      session_id: '',
      agent_id: agentRow.id,
      agent: { id: agent.def.id, name: agent.def.name, direction: agent.def.direction, language: agent.def.language },
      opening: { text: clips.map((c) => c.text).join(' '), clips },
      state: stateView(agent, state, false),
      created_at: this.deps.nowS(),
      cost: costView(spoken.cost),
    };
    // What the open cost is the session's from its first row (docs/api-decisions.md "Costs").
    const metrics: SessionMetrics = {
      ...emptyMetrics(),
      cost: spoken.cost,
      tts_chars: spoken.ttsChars,
      opening_cost: { ...spoken.cost },
      opening_tts_chars: spoken.ttsChars,
    };
    const session: LiveSession = {
      id: 0,
      seq: 0,
      tenantId: principal.tenantId,
      agent,
      voice,
      customerName: input.customer_name ?? null,
      context,
      refMs,
      status: 'open',
      state,
      metrics,
      summary: null,
    };
    return {
      principal,
      input,
      agentRow: { id: agentRow.id, digest: agentRow.digest },
      session,
      view,
      keys: spoken.keys,
      later: spoken.later,
    };
  }

  /** Writes the session of `p` under a fresh number; returns its view (`session_id` `se_<N>`, the call `cl_<N>` a caller may add: `ofCall`, written in this step, so `session.opened` names it). */
  openTx(tx: Tx, p: PreparedSession, ofCall = false): SessionOpened {
    let id = newSessionNumber();
    while (this.deps.repos.sessions.exists(id)) id = newSessionNumber();
    const { session, view, input } = p;
    session.id = id;
    view.session_id = `se_${id}`;
    const row: Omit<SessionRow, 'seq'> = {
      id,
      tenant_id: p.principal.tenantId,
      agent_id: p.agentRow.id,
      agent_digest: p.agentRow.digest,
      customer_name: input.customer_name ?? null,
      customer_phone: input.customer_phone ?? null,
      title: input.title ?? null,
      context: JSON.stringify(session.context),
      ref_ms: session.refMs,
      engine: JSON.stringify(session.state),
      metrics: JSON.stringify(session.metrics),
      status: 'open',
      created_at: view.created_at,
      ended_at: null,
      summary: null,
    };
    session.seq = this.deps.repos.sessions.insert(row);
    this.deps.events.appendTx(tx, sessionOpenedEvent(session, row.title, ofCall));
    return view;
  }

  /**
   * The after phase of an open whose {@link openTx} committed: the session in memory, its clips
   * pinned, its texts left for later (a free voice's) synthesised ahead of need, best effort, as
   * dynamic clips pinned to the session (README.md "What grows on disk, and what bounds it").
   */
  afterOpen(p: PreparedSession): void {
    this.memory.remember(p.session);
    const voice = p.session.voice;
    this.speech.pin(pinOwner(p.session.id), [...p.keys, ...p.later.map((t) => this.speech.keyFor(t, voice))]);
    if (p.later.length > 0) void this.speech.prepare([...p.later], voice, { dynamic: true });
  }

  /**
   * One caller turn (`POST /v1/sessions/{id}/turn`; docs/agents.md "Close grace").
   * `input.stt_audio_ms`, set only by the media core (the HTTP schema has no such field), is
   * the audio metered into `stt_seconds`/`stt_inr` instead of `stt_ms + silence_ms`.
   * @throws ApiError session_not_found (malformed id), not_found (missing/foreign),
   *         session_already_ended (closed by `/end`, by a turn heard in close-grace, or the
   *         grace window lapsed), invalid_request (a bad `stt_audio_ms`, nothing changed).
   * @param onFirstSentence a phone call's media: told a streamed model reply's first sentence
   *        once it is complete and checked (src/app/early-reply.ts), to play while the rest is generated
   */
  async turn(
    principal: Principal,
    sessionId: string,
    input: TurnInputBody & MediaTurnFields,
    scope: Scope,
    onFirstSentence?: FirstSentenceSink,
  ): Promise<Committed<TurnResult>> {
    checkSttAudio(input.stt_audio_ms);
    return this.recordTurn(
      principal,
      sessionId,
      input,
      '',
      scope,
      (s, nowMs, assist) =>
        runTurn(s.agent, s.state, {
          text: input.text,
          nowMs,
          refMs: s.refMs,
          vars: { customer_name: s.customerName, context: s.context },
          phone: input.phone === true,
          ...(input.stt_provider === 'dtmf' ? { keyed: true } : {}),
          sttConfidence: input.stt_confidence ?? null,
          ...(input.stt_unmeasured === true ? { sttUnmeasured: true } : {}),
          ...(assist !== undefined ? { assist } : {}),
        }),
      input.text,
      onFirstSentence,
    );
  }

  /**
   * One phone-line event instead of a caller utterance: silence after the prompt,
   * speech the recogniser could not hear, giving up after the silence re-prompts, or the call's
   * time limit (the engine's `runEventTurn` decides the reply). Answers exactly like
   * {@link turn} (`TurnResultSchema`) and is recorded as a turn: its row has `user_text: ''`,
   * `event` (the kind) and `attempt`; costs and metrics count as a turn's, with recogniser audio
   * only when `event` gives it (`stt_audio_ms`, else `stt_ms + silence_ms`). `give_up` and
   * `max_duration` end the session with its summary (`ended: true`).
   *
   * The media core's turn requests (src/media/call-session.ts `TurnRequest`) map to kinds as:
   * `silence` → `silence` (its `attempt`), or `give_up` when `giveUp`; `failed` → `not_heard`
   * (with its telemetry: `audio_ms` as `stt_audio_ms`); `max_duration` → `max_duration`.
   * `speech` and `dtmf` are caller text for {@link turn}.
   * @throws ApiError invalid_request (unknown kind, bad attempt or telemetry; nothing changed),
   *         and as {@link turn}: session_not_found, not_found, session_already_ended.
   */
  async eventTurn(principal: Principal, sessionId: string, event: SessionEventInput, scope: Scope): Promise<Committed<TurnResult>> {
    checkEvent(event);
    return this.recordTurn(
      principal,
      sessionId,
      event,
      event.kind,
      scope,
      (s, nowMs) =>
        runEventTurn(s.agent, s.state, {
          kind: event.kind,
          ...(event.attempt != null ? { attempt: event.attempt } : {}),
          nowMs,
          refMs: s.refMs,
          vars: { customer_name: s.customerName, context: s.context },
          phone: event.phone === true,
        }),
      '',
    );
  }

  /**
   * What the media core of the session's call should listen for next: the current
   * step's expectation, recogniser grammar, end-of-utterance silence and, for a `choice` step,
   * its option phrases (the engine's `mediaHintsOf`), with the agent's language, its phone-line
   * settings (`media`, defaults applied), and whether the session has ended (or closes with the
   * reply just given).
   * @throws ApiError session_not_found (malformed id), not_found (missing/foreign).
   */
  mediaHints(principal: Principal, sessionId: string): SessionMediaHints {
    const n = parseSessionId(sessionId);
    const s = this.memory.load(principal, n, sessionId);
    const ended = s.status === 'ended' || s.state.closed;
    return {
      ...mediaHintsOf(s.agent, s.state),
      language: s.agent.def.language,
      ended,
      closing: !ended && s.state.closing_at_ms !== null,
      closeGraceMs: s.agent.def.close_grace_ms,
      media: mediaSettingsOf(s.agent.def),
      recording: s.agent.def.recording,
    };
  }

  /** Runs a turn (`engine`) under the session's lock, gives its clips audio, meters and records it. */
  private async recordTurn(
    principal: Principal,
    sessionId: string,
    input: SttTelemetry,
    event: TurnEventKind | '',
    scope: Scope,
    engine: (s: LiveSession, nowMs: number, assist?: LlmAssist) => TurnOutput,
    userText: string,
    onFirstSentence?: FirstSentenceSink,
  ): Promise<Committed<TurnResult>> {
    const started = performance.now();
    const n = parseSessionId(sessionId);
    return this.memory.withLock(n, async () => {
      const s = this.memory.load(principal, n, sessionId);
      const nowMs = this.deps.nowS() * 1000;
      if (s.status === 'open' && graceLapsed(s.agent, s.state, nowMs)) {
        const summary = await this.deps.uow.write((tx) => this.endStateTx(tx, s, s.state, s.metrics, 'completed_by_agent'));
        this.memory.markEnded(s, summary);
      }
      if (s.status === 'ended')
        throw new ApiError('session_already_ended', `session ${sessionId} has ended; open a new one with POST /v1/sessions`);

      let engineStart = performance.now();
      let out = engine(s, nowMs);
      let classifierMs = performance.now() - engineStart;
      // Where the rules missed, the agent's model may answer (docs/llm.md "Where the model acts"):
      // called here, before the write step, and the turn run again with its answer. An identical
      // request answered meanwhile is replayed rather than calling the model twice.
      let llm: LlmCall | null = null;
      const lang = s.agent.def.language;
      const early: { said: Promise<EarlySpeech | null> | null } = { said: null };
      if (out.llm !== undefined && this.options.llm) {
        const replay = this.options.llm.model.configured ? await this.deps.uow.replayOf(scope) : null;
        if (replay !== null) return replay;
        const sink = onFirstSentence && out.llm.kind === 'reply' ? onFirstSentence : null;
        const watch = sink ? new FirstSentenceWatch(lang, (t) => (early.said = sink(t, { language: lang, voice: s.voice }))) : null;
        const step = await runLlmStep(this.options.llm, this.pricing, s, out.llm, userText, watch ? (d) => watch.push(d) : undefined);
        llm = step.call;
        engineStart = performance.now();
        out = engine(s, nowMs, step.assist);
        classifierMs += performance.now() - engineStart;
      }
      // A first sentence played early on a call is the reply's first clip, its audio made once;
      // whatever it cost is this turn's (docs/media.md "The early clip").
      const plan = earlyPlan(out.clips, early.said === null ? null : await early.said, (t) =>
        this.speech.keyFor(spokenTextOf(this.speech, t, lang, s.voice), s.voice),
      );
      if (plan.clips !== out.clips && out.state.last_clips === out.clips) out.state.last_clips = plan.clips;
      const reply = await renderClips(
        this.speech,
        plan.clips,
        lang,
        s.voice,
        this.options.audioBaseUrl(),
        this.options.onSpeechError,
        plan.ensured,
      );
      if (plan.apart !== null) meterClip(reply, plan.apart, this.speech.provider);

      const cost: CostMicro = {
        llm: llm?.costMicro ?? 0,
        tts: this.pricing.ttsMicroOf(reply.liveCharsBy),
        stt: this.pricing.sttMicro(input.stt_provider ?? undefined, sttAudioMsOf(input)),
      };
      const { view, stored, metrics } = meterTurn({
        session: s,
        sessionId,
        input,
        event,
        userText,
        out,
        reply,
        cost,
        startedMs: started,
        classifierMs,
        llm,
        nowS: this.deps.nowS(),
      });
      // The session in memory changes only once the write has committed (and not at all when
      // the unit of work replayed an earlier response instead of running the step). A turn's
      // writes (its log row, the session's end, the stored response) cannot fail once begun but
      // for the database itself: no savepoint, the costliest part of its commit. Its response is
      // stored plain: deflating it was a fifth of the turn's time (docs/api-decisions.md "Idempotency").
      let summary: Summary | null = null;
      const done = await this.deps.uow.run(
        scope,
        (tx) => {
          const { sessions, calls } = this.deps.repos;
          const stateJson = JSON.stringify(out.state);
          sessions.addTurn(s.seq, stored.index, JSON.stringify(stored), stateJson, JSON.stringify(metrics), totalMicro(cost));
          this.deps.events.recordTx(tx, sessionTurnEvent(s, stored, view, calls.has(s.id) ? s.id : null));
          if (out.ended)
            summary = this.endStateTx(tx, s, out.state, metrics, event === 'max_duration' ? 'max_duration' : 'completed_by_agent');
          return view;
        },
        { savepoint: false, plainBody: true },
      );
      if (!done.replayed) {
        s.state = out.state;
        s.metrics = metrics;
        if (summary !== null) this.memory.markEnded(s, summary);
        else this.speech.pin(pinOwner(s.id), reply.keys);
      }
      return done;
    });
  }

  /**
   * Ends a session (`POST /v1/sessions/{id}/end`): ledger finalised, summary built.
   * The phone line of a dialled call's session is hung up first (the options' `closeLine`),
   * unless `options.lineHandled`. Ending an ended session returns the same result again.
   * @throws ApiError session_not_found (malformed id), not_found (missing/foreign); whatever
   *         `closeLine` throws (hangup_failed, …), with nothing changed.
   */
  async end(principal: Principal, sessionId: string, scope: Scope, options: EndOptions = {}): Promise<Committed<SessionEndResult>> {
    const ending = await this.beginEnd(principal, sessionId, options);
    let committed = false;
    try {
      const done = await this.deps.uow.run(scope, (tx) => this.endTx(tx, ending));
      committed = !done.replayed;
      return done;
    } finally {
      this.afterEnd(ending, committed);
    }
  }

  /**
   * The prepare phase of an end: takes the session's lock, loads it and (unless
   * `options.lineHandled`) hangs up its phone line. The caller must call {@link afterEnd}
   * once its step has run or failed.
   * @throws ApiError as {@link end} (the lock is released then).
   */
  async beginEnd(principal: Principal, sessionId: string, options: EndOptions = {}): Promise<SessionEnding> {
    const n = parseSessionId(sessionId);
    const release = await this.memory.lock(n);
    try {
      const session = this.memory.load(principal, n, sessionId);
      const recordLine = session.status === 'ended' || options.lineHandled ? null : ((await this.options.closeLine?.(n)) ?? null);
      const reason = options.endReason ?? 'api_hangup';
      return { sessionId, session, recordLine, endedAt: options.endedAt, reason, summary: undefined, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * Writes the end of the session `ending` holds (final state, metrics, summary, its line) —
   * nothing for a session already ended — and returns the end-of-session result.
   */
  endTx(tx: Tx, ending: SessionEnding): SessionEndResult {
    const s = ending.session;
    if (s.status === 'ended') return this.endView(s, ending.sessionId, s.summary);
    // The closing said, the line dropped after it (whoever hung up): the agent completed the call.
    const reason = s.state.closing_at_ms !== null ? 'completed_by_agent' : ending.reason;
    const summary = this.endStateTx(tx, s, s.state, s.metrics, reason, ending.endedAt);
    ending.summary = summary;
    ending.recordLine?.(tx);
    return this.endView(s, ending.sessionId, summary);
  }

  /**
   * The after phase of an end: the session marked ended in memory when its {@link endTx} ran in
   * a step that committed (`committed`: false when the step failed or was replayed); the lock
   * released.
   */
  afterEnd(ending: SessionEnding, committed: boolean): void {
    if (committed && ending.summary !== undefined) this.memory.markEnded(ending.session, ending.summary);
    ending.release();
  }

  /**
   * The clips the session said last (its opening until the first turn), rendered with their
   * audio: what a carrier stream attaching to a prepared call plays first. Cached
   * clips cost nothing; a missing one is synthesised (a clip that fails has no audio).
   * @throws ApiError session_not_found, not_found.
   */
  async lastClips(principal: Principal, sessionId: string): Promise<ClipView[]> {
    const n = parseSessionId(sessionId);
    const s = this.memory.load(principal, n, sessionId);
    const rendered = await renderClips(
      this.speech,
      s.state.last_clips,
      s.agent.def.language,
      s.voice,
      this.options.audioBaseUrl(),
      this.options.onSpeechError,
    );
    return rendered.clips;
  }

  /**
   * Session detail (`SessionDetailSchema`), then vagent's extension object `session`: agent,
   * status, outcome, times and each step with its captured value (docs/api-decisions.md
   * "Sessions"; nested because the /v1 detail has no top-level status or `ended_at`).
   * @throws ApiError session_not_found, not_found.
   */
  detail(principal: Principal, sessionId: string): SessionDetailView {
    const n = parseSessionId(sessionId);
    const s = this.memory.load(principal, n, sessionId);
    const row = this.deps.repos.sessions.get(n);
    if (!row) {
      // Purged by retention after it was read into memory.
      this.forget([n]);
      throw notFound(sessionId);
    }
    return this.detailView(s, row);
  }

  /**
   * A stored session as `GET /v1/sessions/{id}` shows it (Session detail with its turns and the
   * extension `session`), read from the database without a caller or the memory cache: for
   * `vagent admin export` (docs/api-decisions.md "Retention").
   * @throws Error when the session's agent revision is missing from the store.
   */
  detailOfRow(row: SessionRow): SessionDetailView {
    return this.detailView(this.memory.fromRow(row), row);
  }

  /** Session detail of `s` (its row `row`): the spec's fields and turns, then the extension. */
  private detailView(s: LiveSession, row: SessionRow): SessionDetailView {
    const turns = this.deps.repos.sessions.turns(s.seq).map((t) => JSON.parse(t) as Record<string, unknown>);
    return detailViewOf(s, row, turns);
  }

  /**
   * The caller's sessions, newest first (extension `GET /v1/sessions`; tenant-scoped like
   * `GET /v1/calls`).
   * @param cursor `next_cursor` of the previous page, or null
   * @param limit 1–100
   * @throws ApiError invalid_request for a cursor this daemon did not issue.
   */
  list(
    principal: Principal,
    cursor: string | null,
    limit: number,
  ): { data: SessionListItem[]; has_more: boolean; next_cursor: string | null } {
    const before = cursor === null ? Number.MAX_SAFE_INTEGER : SESSIONS_CURSOR.parse(cursor);
    const rows = this.deps.repos.sessions.list(principal.tenantId, before, limit + 1);
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    return {
      data: page.map(sessionListItem),
      has_more: hasMore,
      next_cursor: hasMore ? SESSIONS_CURSOR.encode(page[page.length - 1]!.seq) : null,
    };
  }

  /**
   * Drops sessions `ids` from memory: retention purged them, so they read
   * as missing from now on. Only ended sessions are ever purged; an open one is left alone.
   */
  forget(ids: Iterable<number>): void {
    this.memory.forget(ids);
  }

  /** Sessions held in memory (open and ended). */
  cachedCount(): number {
    return this.memory.cachedCount();
  }

  /** Sessions held in memory, open and ended apart (tests assert the bound). */
  cacheSizes(): SessionCacheSizes {
    return this.memory.cacheSizes();
  }

  /**
   * Writes the end of `s` (final state, metrics, summary) at `endedAt` (default now), with its
   * events (`reason`: why; see lifecycle-events.ts); returns the summary, `{}` if building it failed.
   */
  private endStateTx(tx: Tx, s: LiveSession, state: EngineState, metrics: SessionMetrics, reason: EndReason, endedAt?: number): Summary {
    let summary: Summary;
    try {
      summary = buildSummary(s.agent, state);
    } catch {
      summary = {};
    }
    const at = endedAt ?? this.deps.nowS();
    this.deps.repos.sessions.end(s.seq, JSON.stringify(state), JSON.stringify(metrics), at, JSON.stringify(summary));
    const recordingUrl = this.options.recordingUrl?.(s.id) ?? null;
    appendEndEventsTx(tx, this.deps.events, this.deps.repos, s, { summary, metrics, endedAt: at, reason, recordingUrl });
    return summary;
  }

  private endView(s: LiveSession, sessionId: string, summary: Summary | null): SessionEndResult {
    return { session_id: sessionId, ended: true, summary: summary ?? {}, cost: costView(s.metrics.cost) };
  }
}

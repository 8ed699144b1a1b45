/**
 * Conversation sessions (spec: Sessions; Turn result; Session detail; End-of-session result;
 * States and transitions › Session; DESIGN.md §4 "Sessions", "Costs").
 *
 * A turn runs under a per-session lock: the engine (pure) decides the reply, the clips get
 * their audio (cache, or live synthesis), and the new state, the turn row and the stored
 * idempotent response commit in one durable transaction, the unit of work's step
 * (docs/unit-of-work.md); memory follows only once that step has committed.
 * Open sessions stay in memory, with a small window of recently ended ones (issue 15 item 7);
 * an ended session beyond that window is read back from the database when asked for (its
 * detail, `/end` again, a refused turn), and the database is the truth after a restart.
 */
import { ApiError } from '../domain/errors.js';
import { SESSIONS_CURSOR } from '../domain/cursor.js';
import type { SessionEndResult, SessionListItem, SessionOpened, TurnResult } from '../domain/resources.js';
import { newSessionNumber, parseSessionNumber, shortId } from '../domain/ids.js';
import { addCost, costView } from '../domain/money.js';
import { buildSummary, type SessionSummary } from '../engine/summary.js';
import { graceLapsed, openingClips, runEventTurn, runTurn, type TurnEventKind, type TurnOutput } from '../engine/turn.js';
import { mediaHintsOf, type MediaHints } from '../engine/media-hints.js';
import { initialState, stepProgress, type CompiledAgent, type EngineState } from '../engine/state.js';
import { isTemplate, renderTemplate, usesOnlySessionVars } from '../engine/template.js';
import { withContextDefaults } from '../engine/context-needs.js';
import { mediaSettingsOf, type MediaSettings } from '../domain/agent.js';
import type { Pricing } from '../config/pricing.js';
import type { SessionRow } from '../store/index.js';
import { scoped } from './access.js';
import type { AgentService } from './agents.js';
import { renderClips, spokenTextOf, type ClipView } from './clips.js';
import type { Caller, ServiceDeps } from './context.js';
import type { Committed, Scope, Tx } from './unit-of-work.js';
import {
  emptyMetrics,
  sessionDetail,
  sessionListItem,
  sessionTotals,
  stepViews,
  type SessionDetailExtension,
  type SessionMetrics,
  type StoredTurn,
} from './session-model.js';
import type { SpeechPort } from './speech-port.js';
import { referenceTime, requireSessionValues } from './session-values.js';
import {
  checkEvent,
  checkSttAudio,
  type MediaTurnFields,
  type SessionEventInput,
  type SttTelemetry,
  type TurnInputBody,
} from './turn-input.js';

/** A validated `POST /v1/sessions` body. */
export interface OpenSessionInput {
  agent_id: string;
  context?: Record<string, unknown> | null;
  customer_name?: string | null;
  customer_phone?: string | null;
  title?: string | null;
}

/** {@link SessionService.mediaHints}: the engine's hints of the current step, and the session's language, settings and end. */
export type SessionMediaHints = MediaHints & {
  /** The agent's language, BCP-47 (the recogniser's). */
  language: string;
  /** The session has ended, or closes with the reply just given: the media core hangs up after playing it. */
  ended: boolean;
  /**
   * The closing line has been said and the close-grace window runs (`close_grace_ms`): a last
   * caller turn is still heard (and ends the session); the media core may hang up once the
   * closing has played and the window has lapsed.
   */
  closing: boolean;
  /** The agent's `close_grace_ms`. */
  closeGraceMs: number;
  /** The agent's phone-line settings, defaults applied. */
  media: MediaSettings;
};

/** A session in memory: its agent, values, state and metrics. */
export interface LiveSession {
  id: number;
  /** Storage order of the session row (keys its turn log). */
  seq: number;
  tenantId: string;
  agent: CompiledAgent;
  voice: string;
  customerName: string | null;
  context: Record<string, unknown>;
  refMs: number;
  status: 'open' | 'ended';
  state: EngineState;
  metrics: SessionMetrics;
  summary: Summary | null;
}

/** A session's summary, or `{}` when building it failed (spec: End-of-session result). */
type Summary = SessionSummary | Record<string, never>;

/**
 * Hangs up the phone line of session `n`'s call ahead of the session's end, if it has one
 * that may be up (the call service's `releaseLine`). Resolves with the write that records it,
 * to run in the end's step, or null when there is nothing to record.
 * @throws ApiError when the line could not be hung up (the session then stays open).
 */
export type LineCloser = (n: number) => Promise<((tx: Tx) => void) | null>;

/** A session opened but not yet written: what {@link SessionService.openTx} writes and {@link SessionService.afterOpen} keeps. */
export interface PreparedSession {
  readonly caller: Caller;
  readonly input: OpenSessionInput;
  readonly agentRow: { id: string; digest: string };
  readonly session: LiveSession;
  readonly view: SessionOpened;
  /** The audio cache keys of the opening's clips (pinned once the session is open). */
  readonly keys: readonly string[];
}

/**
 * A session held for its end (its lock taken, its line released): written by
 * {@link SessionService.endTx}, finished by {@link SessionService.afterEnd}, which must run
 * whatever happened, as it releases the lock.
 */
export interface SessionEnding {
  readonly sessionId: string;
  readonly session: LiveSession;
  /** Records the released line in the end's step, if any. */
  readonly recordLine: ((tx: Tx) => void) | null;
  /** When the session ended, epoch seconds, if not now. */
  readonly endedAt: number | undefined;
  /** Set by {@link SessionService.endTx}: the summary written (undefined while not written; the session was already ended). */
  summary: Summary | undefined;
  /** Releases the session's lock. */
  readonly release: () => void;
}

/** Options of {@link SessionService.end}. */
export interface EndOptions {
  /** The caller takes care of the call's line itself (a hang-up, a failed dial, the phone participant leaving). */
  lineHandled?: boolean;
  /**
   * When the session ended, epoch seconds, if not now: a call orphaned by a crash ended when it
   * was last seen alive (CallRepo.lastSeen), not when the daemon came back.
   */
  endedAt?: number;
}

/** Options of the session service. */
export interface SessionServiceOptions {
  /** Base URL of audio links (`public_url` or the daemon's own address, known once it listens). */
  audioBaseUrl: () => string;
  /** Told of synthesis failures (for the log); never given text. */
  onSpeechError?: (err: unknown) => void;
  /**
   * Open sessions kept in memory (least recently used beyond this are dropped; they reload).
   * Default {@link DEFAULT_MAX_OPEN_CACHED}.
   */
  maxCached?: number;
  /**
   * Ended sessions kept in memory, most recently used first (issue 15 item 7); older ones are
   * dropped and reload from the database, answering exactly as before. Default
   * {@link DEFAULT_MAX_ENDED_CACHED}; 0 keeps none.
   */
  maxEndedCached?: number;
  /** Hangs up a session's phone line when the session is ended (default: sessions have no lines). */
  closeLine?: LineCloser;
}

/** Default bound of the open sessions held in memory ({@link SessionServiceOptions.maxCached}). */
export const DEFAULT_MAX_OPEN_CACHED = 50_000;

/** Default bound of the ended sessions held in memory ({@link SessionServiceOptions.maxEndedCached}). */
export const DEFAULT_MAX_ENDED_CACHED = 1_000;

/** Sessions held in memory by a {@link SessionService} (see {@link SessionService.cacheSizes}). */
export interface SessionCacheSizes {
  /** Open sessions in memory (at most `maxCached`, plus any held by a request in flight). */
  open: number;
  /** Ended sessions in memory (at most `maxEndedCached`, plus any held by a request in flight). */
  ended: number;
}

/** `GET /v1/sessions/{id}`: Session detail with the extension object `session`. */
export type SessionDetailView = ReturnType<typeof sessionDetail> & { session: SessionDetailExtension };

/** Session use cases. */
export class SessionService {
  /** Open sessions in memory, least recently used first. */
  private readonly live = new Map<number, LiveSession>();
  /** The window of recently used ended sessions, least recently used first. */
  private readonly ended = new Map<number, LiveSession>();
  private readonly locks = new Map<number, Promise<unknown>>();
  private readonly maxCached: number;
  private readonly maxEndedCached: number;
  /** The store's `externalVersion()` the ended window was filled under. */
  private endedVersion = -1;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly agents: AgentService,
    private readonly speech: SpeechPort,
    private readonly pricing: Pricing,
    private readonly options: SessionServiceOptions,
  ) {
    this.maxCached = options.maxCached ?? DEFAULT_MAX_OPEN_CACHED;
    this.maxEndedCached = options.maxEndedCached ?? DEFAULT_MAX_ENDED_CACHED;
  }

  /**
   * Opens a session (spec: `POST /v1/sessions` ≡ `POST /v1/agents/{id}/load`).
   * Every way a session opens comes through here (agent load, `POST /v1/calls` prepare or
   * dial, an inbound call), so none opens without what its agent speaks: the context gets the
   * agent's `context_defaults`, then {@link requireSessionValues} checks the rest.
   * @throws ApiError workflow_not_found (malformed agent id), not_found (missing agent),
   *         invalid_request (`context.now` not an ISO 8601 time; a `required_context` key or
   *         `customer_name` the agent speaks is missing or empty, param `context.<key>` or
   *         `customer_name`).
   */
  async open(caller: Caller, input: OpenSessionInput, scope: Scope): Promise<Committed<SessionOpened>> {
    const prepared = await this.prepareOpen(caller, input);
    const done = await this.deps.uow.run(scope, (tx) => this.openTx(tx, prepared));
    if (!done.replayed) this.afterOpen(prepared);
    return done;
  }

  /**
   * The prepare phase of {@link open}: the agent resolved, the context checked, the opening's
   * audio rendered. Nothing is written.
   * @throws ApiError as {@link open}.
   */
  async prepareOpen(caller: Caller, input: OpenSessionInput): Promise<PreparedSession> {
    const agentRow = this.agents.resolve(caller, input.agent_id);
    const agent = this.agents.compiledRevision(agentRow.digest);
    const context = withContextDefaults(agent.def, input.context ?? {});
    const refMs = referenceTime(context, this.deps.now() * 1000);
    requireSessionValues(agent.def, { customer_name: input.customer_name ?? null, context });
    const vars = { customer_name: input.customer_name ?? null, context };
    const opening = openingClips(agent, vars);
    const voice = this.agents.voiceOf(agent);
    const rendered = await renderClips(
      this.speech,
      opening,
      agent.def.language,
      voice,
      this.options.audioBaseUrl(),
      this.options.onSpeechError,
    );
    const clips: ClipView[] = rendered.clips.map((c, i) =>
      Object.assign(c, { display_order: i, requires_user_input: opening[i]!.requires_user_input }),
    );
    const state = initialState(agent);
    state.last_clips = opening;
    const view: SessionOpened = {
      session_id: '',
      agent_id: agentRow.id,
      agent: { id: agent.def.id, name: agent.def.name, direction: agent.def.direction, language: agent.def.language },
      opening: { text: clips.map((c) => c.text).join(' '), clips },
      state: this.stateView(agent, state, false),
      created_at: this.deps.now(),
    };
    const session: LiveSession = {
      id: 0,
      seq: 0,
      tenantId: caller.tenantId,
      agent,
      voice,
      customerName: input.customer_name ?? null,
      context,
      refMs,
      status: 'open',
      state,
      metrics: emptyMetrics(),
      summary: null,
    };
    return { caller, input, agentRow: { id: agentRow.id, digest: agentRow.digest }, session, view, keys: rendered.keys };
  }

  /** Writes the session of `p` under a fresh number; returns its view (`session_id` `se_<N>`, the call `cl_<N>` a caller may add). */
  openTx(_tx: Tx, p: PreparedSession): SessionOpened {
    let id = newSessionNumber();
    while (this.deps.repos.sessions.exists(id)) id = newSessionNumber();
    const { session, view, input } = p;
    session.id = id;
    view.session_id = `se_${id}`;
    const row: Omit<SessionRow, 'seq'> = {
      id,
      tenant_id: p.caller.tenantId,
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
    return view;
  }

  /** The after phase of an open whose {@link openTx} committed: the session in memory, its clips pinned, its texts prepared. */
  afterOpen(p: PreparedSession): void {
    this.remember(p.session);
    this.speech.pin(pinOwner(p.session.id), p.keys);
    void this.prepareSessionTexts(p.session);
  }

  /**
   * One caller turn (spec: `POST /v1/sessions/{id}/turn`; States › Session, close-grace).
   * `input.stt_audio_ms`, set only by the media core (the HTTP schema has no such field), is
   * the audio metered into `stt_seconds`/`stt_inr` instead of `stt_ms + silence_ms`.
   * @throws ApiError session_not_found (malformed id), not_found (missing/foreign),
   *         session_already_ended (closed by `/end`, by a turn heard in close-grace, or the
   *         grace window lapsed), invalid_request (a bad `stt_audio_ms`, nothing changed).
   */
  async turn(caller: Caller, sessionId: string, input: TurnInputBody & MediaTurnFields, scope: Scope): Promise<Committed<TurnResult>> {
    checkSttAudio(input.stt_audio_ms);
    return this.recordTurn(
      caller,
      sessionId,
      input,
      '',
      scope,
      (s, nowMs) =>
        runTurn(s.agent, s.state, {
          text: input.text,
          nowMs,
          refMs: s.refMs,
          vars: { customer_name: s.customerName, context: s.context },
          phone: input.phone === true,
          sttConfidence: input.stt_confidence ?? null,
          ...(input.stt_unmeasured === true ? { sttUnmeasured: true } : {}),
        }),
      input.text,
    );
  }

  /**
   * One phone-line event instead of a caller utterance (issue 16): silence after the prompt,
   * speech the recogniser could not hear, giving up after the silence re-prompts, or the call's
   * time limit (the engine's `runEventTurn` decides the reply). Answers exactly like
   * {@link turn} (spec: Turn result) and is recorded as a turn: its row has `user_text: ''`,
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
  async eventTurn(caller: Caller, sessionId: string, event: SessionEventInput, scope: Scope): Promise<Committed<TurnResult>> {
    checkEvent(event);
    return this.recordTurn(
      caller,
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
   * What the media core of the session's call should listen for next (issue 16): the current
   * step's expectation, recogniser grammar, end-of-utterance silence and, for a `choice` step,
   * its option phrases (the engine's `mediaHintsOf`), with the agent's language, its phone-line
   * settings (`media`, defaults applied), and whether the session has ended (or closes with the
   * reply just given).
   * @throws ApiError session_not_found (malformed id), not_found (missing/foreign).
   */
  mediaHints(caller: Caller, sessionId: string): SessionMediaHints {
    const n = this.parseId(sessionId);
    const s = this.load(caller, n, sessionId);
    const ended = s.status === 'ended' || s.state.closed;
    return {
      ...mediaHintsOf(s.agent, s.state),
      language: s.agent.def.language,
      ended,
      closing: !ended && s.state.closing_at_ms !== null,
      closeGraceMs: s.agent.def.close_grace_ms,
      media: mediaSettingsOf(s.agent.def),
    };
  }

  /** Runs a turn (`engine`) under the session's lock, gives its clips audio, meters and records it. */
  private async recordTurn(
    caller: Caller,
    sessionId: string,
    input: SttTelemetry,
    event: TurnEventKind | '',
    scope: Scope,
    engine: (s: LiveSession, nowMs: number) => TurnOutput,
    userText: string,
  ): Promise<Committed<TurnResult>> {
    const started = performance.now();
    const n = this.parseId(sessionId);
    return this.withLock(n, async () => {
      const s = this.load(caller, n, sessionId);
      const nowMs = this.deps.now() * 1000;
      if (s.status === 'open' && graceLapsed(s.agent, s.state, nowMs)) {
        const summary = await this.deps.uow.write((tx) => this.endStateTx(tx, s, s.state, s.metrics));
        this.markEnded(s, summary);
      }
      if (s.status === 'ended')
        throw new ApiError('session_already_ended', `session ${sessionId} has ended; open a new one with POST /v1/sessions`);

      const engineStart = performance.now();
      const out = engine(s, nowMs);
      const classifierMs = performance.now() - engineStart;
      const reply = await renderClips(
        this.speech,
        out.clips,
        s.agent.def.language,
        s.voice,
        this.options.audioBaseUrl(),
        this.options.onSpeechError,
      );

      const sttAudioMs = input.stt_audio_ms ?? (input.stt_ms ?? 0) + (input.silence_ms ?? 0);
      const cost = {
        llm: 0,
        tts: this.pricing.ttsMicro(this.speech.provider, reply.liveChars),
        stt: this.pricing.sttMicro(input.stt_provider ?? undefined, sttAudioMs),
      };
      const metrics: SessionMetrics = {
        ...s.metrics,
        turns: s.metrics.turns + 1,
        tts_chars: s.metrics.tts_chars + reply.liveChars,
        stt_audio_ms: s.metrics.stt_audio_ms + sttAudioMs,
        cache_hits: s.metrics.cache_hits + reply.hits,
        live_tts_calls: s.metrics.live_tts_calls + reply.misses,
        cost: addCost(s.metrics.cost, cost),
        total_silence_ms: s.metrics.total_silence_ms + (input.silence_ms ?? 0),
      };
      const text = reply.clips.map((c) => c.text).join(' ');
      const totalMs = performance.now() - started;
      metrics.total_latency_ms = s.metrics.total_latency_ms + totalMs;
      const latency = {
        total: round3(totalMs),
        llm: null,
        stt: input.stt_ms ?? null,
        tts: round3(reply.ttsMs),
        classifier: round3(classifierMs),
      };
      const view: TurnResult = {
        session_id: sessionId,
        text,
        spoken_text: reply.spokenText,
        audio_url: reply.audioUrl,
        clips: reply.clips,
        cache_hit: reply.clips.length > 0 && reply.misses === 0,
        ended: out.ended,
        state: this.stateView(s.agent, out.state, out.stepDone),
        trace: { layer: out.layer, llm_used: false, steps: out.trace, latency_ms: latency },
        cost: costView(cost),
        session_totals: sessionTotals(metrics),
      };
      const stored: StoredTurn = {
        index: metrics.turns,
        at: this.deps.now(),
        user_text: userText,
        reply_text: text,
        layer: out.layer,
        cursor: out.state.cursor,
        ended: out.ended,
        cache_hits: reply.hits,
        live_tts_calls: reply.misses,
        tts_chars: reply.liveChars,
        cost: view.cost,
        latency_ms: { total: latency.total, tts: latency.tts, classifier: latency.classifier, stt: latency.stt },
        stt_confidence: input.stt_confidence ?? null,
        stt_provider: input.stt_provider ?? null,
        silence_ms: input.silence_ms ?? null,
        stt_ms: input.stt_ms ?? null,
        stt_audio_ms: sttAudioMs,
        ...(event ? { event, attempt: (input as SessionEventInput).attempt ?? null } : {}),
      };
      // The session in memory changes only once the write has committed (and not at all when
      // the unit of work replayed an earlier response instead of running the step). A turn's
      // writes (its log row, the session's end, the stored response) cannot fail once begun but
      // for the database itself: no savepoint, the costliest part of its commit.
      let summary: Summary | null = null;
      const done = await this.deps.uow.run(
        scope,
        (tx) => {
          this.deps.repos.sessions.addTurn(s.seq, stored.index, JSON.stringify(stored), JSON.stringify(out.state), JSON.stringify(metrics));
          if (out.ended) summary = this.endStateTx(tx, s, out.state, metrics);
          return view;
        },
        { savepoint: false },
      );
      if (!done.replayed) {
        s.state = out.state;
        s.metrics = metrics;
        if (summary !== null) this.markEnded(s, summary);
        else this.speech.pin(pinOwner(s.id), reply.keys);
      }
      return done;
    });
  }

  /**
   * Ends a session (spec: `POST /v1/sessions/{id}/end`): ledger finalised, summary built.
   * The phone line of a dialled call's session is hung up first (the options' `closeLine`),
   * unless `options.lineHandled`. Ending an ended session returns the same result again.
   * @throws ApiError session_not_found (malformed id), not_found (missing/foreign); whatever
   *         `closeLine` throws (hangup_failed, …), with nothing changed.
   */
  async end(caller: Caller, sessionId: string, scope: Scope, options: EndOptions = {}): Promise<Committed<SessionEndResult>> {
    const ending = await this.beginEnd(caller, sessionId, options);
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
  async beginEnd(caller: Caller, sessionId: string, options: EndOptions = {}): Promise<SessionEnding> {
    const n = this.parseId(sessionId);
    const release = await this.lock(n);
    try {
      const session = this.load(caller, n, sessionId);
      const recordLine = session.status === 'ended' || options.lineHandled ? null : ((await this.options.closeLine?.(n)) ?? null);
      return { sessionId, session, recordLine, endedAt: options.endedAt, summary: undefined, release };
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
    const summary = this.endStateTx(tx, s, s.state, s.metrics, ending.endedAt);
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
    if (committed && ending.summary !== undefined) this.markEnded(ending.session, ending.summary);
    ending.release();
  }

  /**
   * The clips the session said last (its opening until the first turn), rendered with their
   * audio: what a carrier stream attaching to a prepared call plays first (issue 16). Cached
   * clips cost nothing; a missing one is synthesised (a clip that fails has no audio).
   * @throws ApiError session_not_found, not_found.
   */
  async lastClips(caller: Caller, sessionId: string): Promise<ClipView[]> {
    const n = this.parseId(sessionId);
    const s = this.load(caller, n, sessionId);
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
   * Session detail (spec: Session detail), then vagent's extension object `session`: agent,
   * status, outcome, times and each step with its captured value (DESIGN.md §4 "Extensions";
   * nested because the spec says the detail has no top-level status or `ended_at`).
   * @throws ApiError session_not_found, not_found.
   */
  detail(caller: Caller, sessionId: string): SessionDetailView {
    const n = this.parseId(sessionId);
    const s = this.load(caller, n, sessionId);
    const row = this.deps.repos.sessions.get(n);
    if (!row) {
      // Purged (issue 15 item 2) after it was read into memory.
      this.forget([n]);
      throw notFound(sessionId);
    }
    return this.detailView(s, row);
  }

  /**
   * A stored session as `GET /v1/sessions/{id}` shows it (Session detail with its turns and the
   * extension `session`), read from the database without a caller or the memory cache: for
   * `vagent admin export` (issue 15 item 2).
   * @throws Error when the session's agent revision is missing from the store.
   */
  detailOfRow(row: SessionRow): SessionDetailView {
    return this.detailView(this.fromRow(row), row);
  }

  /** Session detail of `s` (its row `row`): the spec's fields and turns, then the extension. */
  private detailView(s: LiveSession, row: SessionRow): SessionDetailView {
    const turns = this.deps.repos.sessions.turns(s.seq).map((t) => JSON.parse(t) as Record<string, unknown>);
    let steps: SessionDetailExtension['steps'] = [];
    try {
      steps = stepViews(s.agent.def.steps, buildSummary(s.agent, s.state));
    } catch {
      // As for the summary: a state the summary cannot be built from shows no steps.
    }
    // The row says ended as soon as the end commits (the session list and the call's status read
    // it); `s` is marked ended only once that commit is durable. Both views must agree.
    const ended = s.status === 'ended' || row.status === 'ended';
    const summary = s.summary ?? (ended && row.summary ? (JSON.parse(row.summary) as Summary) : null);
    const outcome = ended && summary && 'outcome' in summary ? summary.outcome : null;
    return {
      ...sessionDetail(s.id, s.metrics, turns),
      session: {
        agent_id: row.agent_id,
        status: ended ? 'ended' : 'open',
        title: row.title,
        customer_name: row.customer_name,
        created_at: row.created_at,
        ended_at: ended ? row.ended_at : null,
        outcome,
        steps,
      },
    };
  }

  /**
   * Drops sessions `ids` from memory: retention purged them (issue 15 item 2), so they read
   * as missing from now on. Only ended sessions are ever purged; an open one is left alone.
   */
  forget(ids: Iterable<number>): void {
    for (const n of ids) this.ended.delete(n);
  }

  /**
   * The caller's sessions, newest first (extension `GET /v1/sessions`; tenant-scoped like
   * `GET /v1/calls`).
   * @param cursor `next_cursor` of the previous page, or null
   * @param limit 1–100
   * @throws ApiError invalid_request for a cursor this daemon did not issue.
   */
  list(caller: Caller, cursor: string | null, limit: number): { data: SessionListItem[]; has_more: boolean; next_cursor: string | null } {
    const before = cursor === null ? Number.MAX_SAFE_INTEGER : SESSIONS_CURSOR.parse(cursor);
    const rows = this.deps.repos.sessions.list(caller.tenantId, before, limit + 1);
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    return {
      data: page.map(sessionListItem),
      has_more: hasMore,
      next_cursor: hasMore ? SESSIONS_CURSOR.encode(page[page.length - 1]!.seq) : null,
    };
  }

  /** Sessions held in memory (open and ended). */
  cachedCount(): number {
    return this.live.size + this.ended.size;
  }

  /** Sessions held in memory, open and ended apart (issue 15 item 7: tests assert the bound). */
  cacheSizes(): SessionCacheSizes {
    return { open: this.live.size, ended: this.ended.size };
  }

  /** Writes the end of `s` (final state, metrics, summary) at `endedAt` (default now); returns the summary, `{}` if building it failed. */
  private endStateTx(_tx: Tx, s: LiveSession, state: EngineState, metrics: SessionMetrics, endedAt?: number): Summary {
    let summary: Summary;
    try {
      summary = buildSummary(s.agent, state);
    } catch {
      summary = {};
    }
    this.deps.repos.sessions.end(
      s.seq,
      JSON.stringify(state),
      JSON.stringify(metrics),
      endedAt ?? this.deps.now(),
      JSON.stringify(summary),
    );
    return summary;
  }

  /** Marks `s` ended in memory (after its end committed) and moves it to the ended window. */
  private markEnded(s: LiveSession, summary: Summary): void {
    s.status = 'ended';
    s.summary = summary;
    this.live.delete(s.id);
    this.speech.unpin(pinOwner(s.id));
    this.remember(s);
  }

  private endView(s: LiveSession, sessionId: string, summary: Summary | null): SessionEndResult {
    return { session_id: sessionId, ended: true, summary: summary ?? {}, cost: costView(s.metrics.cost) };
  }

  private stateView(agent: CompiledAgent, state: EngineState, stepDone: boolean) {
    return { cursor: state.cursor, step_done: stepDone, slots: {}, step_progress: stepProgress(agent, state) };
  }

  private parseId(sessionId: string): number {
    const n = parseSessionNumber(sessionId);
    if (n === null)
      throw new ApiError('session_not_found', `session id ${shortId(sessionId)} is malformed: se_ followed by a number`, {
        param: 'session_id',
      });
    return n;
  }

  /** The caller's session `n` from memory or the database. @throws ApiError not_found. */
  private load(caller: Caller, n: number, sessionId: string): LiveSession {
    // Another process (`vagent admin purge`) may have deleted ended sessions held here: the
    // window starts afresh once it has committed anything (seen within EXTERNAL_CHECK_MS).
    const version = this.deps.repos.store.externalVersion();
    if (version !== this.endedVersion) {
      this.ended.clear();
      this.endedVersion = version;
    }
    const cached = this.live.get(n) ?? this.ended.get(n);
    if (cached) {
      if (cached.tenantId === caller.tenantId || scoped(this.deps, caller, { tenant_id: cached.tenantId }, sessionId)) {
        this.remember(cached);
        return cached;
      }
      throw notFound(sessionId);
    }
    const row = scoped(this.deps, caller, this.deps.repos.sessions.get(n), sessionId);
    if (!row) throw notFound(sessionId);
    const s = this.fromRow(row);
    this.remember(s);
    return s;
  }

  /** The in-memory form of a stored session (its newest state and metrics). */
  private fromRow(row: SessionRow): LiveSession {
    const agent = this.agents.compiledRevision(row.agent_digest);
    const latest = row.status === 'open' ? this.deps.repos.sessions.latestState(row.seq) : undefined;
    return {
      id: row.id,
      seq: row.seq,
      tenantId: row.tenant_id,
      agent,
      voice: this.agents.voiceOf(agent),
      customerName: row.customer_name,
      context: JSON.parse(row.context) as Record<string, unknown>,
      refMs: row.ref_ms,
      status: row.status,
      state: JSON.parse(latest?.engine ?? row.engine) as EngineState,
      metrics: JSON.parse(latest?.metrics ?? row.metrics) as SessionMetrics,
      summary: row.summary === null ? null : (JSON.parse(row.summary) as SessionSummary),
    };
  }

  /**
   * Puts `s` last (most recently used) in its map: open sessions in `live`, ended ones in the
   * ended window; then trims that map to its bound.
   */
  private remember(s: LiveSession): void {
    const map = s.status === 'open' ? this.live : this.ended;
    map.delete(s.id);
    map.set(s.id, s);
    this.trim();
  }

  /**
   * Drops the least recently used sessions beyond each map's bound, sparing the ones a request
   * holds (the request's end trims again, see {@link withLock}).
   */
  private trim(): void {
    for (const [map, max] of [
      [this.live, this.maxCached],
      [this.ended, this.maxEndedCached],
    ] as const) {
      if (map.size <= max) continue;
      for (const n of map.keys()) {
        if (map.size <= max) break;
        if (this.locks.has(n)) continue;
        map.delete(n);
        // An open session leaving memory keeps only the cache's keep window for its clips.
        if (map === this.live) this.speech.unpin(pinOwner(n));
      }
    }
  }

  private async withLock<T>(n: number, fn: () => Promise<T>): Promise<T> {
    const release = await this.lock(n);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Takes session `n`'s lock once its holders before have released it; resolves with the release (call it once). */
  private async lock(n: number): Promise<() => void> {
    const prev = this.locks.get(n);
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.locks.set(n, tail);
    if (prev) await prev;
    return () => {
      release();
      if (this.locks.get(n) === tail) {
        this.locks.delete(n);
        this.trim();
      }
    };
  }

  /**
   * Synthesises this session's rendered prompt templates ahead of need (best effort), as
   * dynamic clips pinned to the session: they hold its values (a customer's name), so they
   * are bounded by the cache's cap once it ends (issue 15 item 3).
   */
  private async prepareSessionTexts(s: LiveSession): Promise<void> {
    const vars = { customer_name: s.customerName, context: s.context };
    const texts = s.agent.def.steps
      .flatMap((st) => [st.ask, st.reprompt ?? ''])
      .concat(s.agent.def.closing)
      .filter((t) => t && isTemplate(t) && usesOnlySessionVars(t))
      .map((t) => spokenTextOf(this.speech, renderTemplate(t, vars), s.agent.def.language, s.voice));
    if (texts.length === 0) return;
    if (s.status === 'open')
      this.speech.pin(
        pinOwner(s.id),
        texts.map((t) => this.speech.keyFor(t, s.voice)),
      );
    await this.speech.prepare(texts, s.voice, { dynamic: true });
  }
}

/** The owner of an open session's pins in the audio cache. */
function pinOwner(n: number): string {
  return `se_${n}`;
}

function notFound(sessionId: string): ApiError {
  return new ApiError('not_found', `no session ${shortId(sessionId)}`, { param: 'session_id' });
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * The types of the session use cases (src/app/sessions.ts): their inputs, options, the
 * session as held in memory, and the handles of the open and end phases
 * (docs/unit-of-work.md).
 */
import type { LlmStepOptions } from './llm-step.js';
import type { MediaSettings, RecordingMode } from '../domain/agent.js';
import type { SessionOpened } from '../contract/index.js';
import type { MediaHints } from '../engine/media-hints.js';
import type { CompiledAgent, EngineState } from '../engine/state.js';
import type { SessionSummary } from '../engine/summary.js';
import type { Principal } from './context.js';
import type { sessionDetail, SessionDetailExtension, SessionMetrics } from './session-model.js';
import type { Tx } from './unit-of-work.js';
import type { EndReason } from '../domain/events.js';
import type { OpenSessionInput } from '../contract/sessions.js';

/** A validated `POST /v1/sessions` body. */
export type { OpenSessionInput };

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
  /** The agent's own `recording` setting; undefined: the tenant's applies. */
  recording: RecordingMode | undefined;
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

/** A session's summary, or `{}` when building it failed (`EndResultSchema` in src/contract/sessions.ts). */
export type Summary = SessionSummary | Record<string, never>;

/**
 * Hangs up the phone line of session `n`'s call ahead of the session's end, if it has one
 * that may be up (the call service's `releaseLine`). Resolves with the write that records it,
 * to run in the end's step, or null when there is nothing to record.
 * @throws ApiError when the line could not be hung up (the session then stays open).
 */
export type LineCloser = (n: number) => Promise<((tx: Tx) => void) | null>;

/** A session opened but not yet written: what {@link SessionService.openTx} writes and {@link SessionService.afterOpen} keeps. */
export interface PreparedSession {
  readonly principal: Principal;
  readonly input: OpenSessionInput;
  readonly agentRow: { id: string; digest: string };
  readonly session: LiveSession;
  readonly view: SessionOpened;
  /** The audio cache keys of the opening's clips and of the texts synthesised with it (pinned once the session is open). */
  readonly keys: readonly string[];
  /** The session's texts (spoken) to synthesise after the open, best effort: a free voice's (src/app/opening-speech.ts). */
  readonly later: readonly string[];
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
  /** Why it ends (its call's `call.ended` `end_reason`; docs/events.md "End reasons"). */
  readonly reason: EndReason;
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
  /** Why the session (and its call) ends: docs/events.md "End reasons" (default `api_hangup`: an API request ended it). */
  endReason?: EndReason;
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
   * Ended sessions kept in memory, most recently used first; older ones are
   * dropped and reload from the database, answering exactly as before. Default
   * {@link DEFAULT_MAX_ENDED_CACHED}; 0 keeps none.
   */
  maxEndedCached?: number;
  /** Hangs up a session's phone line when the session is ended (default: sessions have no lines). */
  closeLine?: LineCloser;
  /** The URL of call `n`'s recording, or null when it has none (default: none), for its end report. */
  recordingUrl?: (n: number) => string | null;
  /** The language model a turn may call where the rules miss (default: none; docs/llm.md "Where the model acts"). */
  llm?: LlmStepOptions;
  /**
   * The tenant budget check before an open's paid synthesis (default: none): throws
   * `rate_limit_exceeded` when `extraMicro` more would pass the tenant's budget today
   * (`BudgetService.check`; docs/api-decisions.md "Costs").
   */
  budget?: { check(tenantId: string, extraMicro: number): void };
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

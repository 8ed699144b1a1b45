/**
 * Runs the scenarios of loaded scenario files (docs/agent-tests.md "How a scenario runs"): the
 * file's agent is put on a {@link ScenarioHost} — the daemon's own services over a temp state
 * dir — and each scenario opens a session there, says its caller lines one turn at a time,
 * checks each reply against its turn's `expect`, ends the session and checks the scenario's
 * `expect` against the summary. Every turn runs even after a failed expectation, so the report
 * shows the whole conversation; a turn the session refuses (it had ended) stops the scenario.
 */
import type { Scenario } from '../../domain/agent-scenario.js';
import { CURSOR_CLOSING } from '../../engine/state.js';
import type { ScenarioHost, ScenarioSessionInput } from '../../daemon/scenario-host.js';
import { checkSession, checkTurn, type Failure, type SessionObservation, type SlotValue, type TurnObservation } from './expect.js';
import type { LoadedScenarioFile } from './scenario-file.js';

/** One turn as it ran. */
export interface TurnRun extends TurnObservation {
  /** 1-based. */
  n: number;
  /** What the caller said. */
  caller: string;
  /** What the recogniser heard (a voice run only). */
  heard?: string;
  failures: Failure[];
}

/** One scenario as it ran. */
export interface ScenarioRun {
  name: string;
  passed: boolean;
  /** Every failed expectation, turns first, in order; `failures[0]` is the one a report names. */
  failures: Failure[];
  /** A reason the scenario could not run to its end (a session that would not open, a refused turn). */
  error: string | null;
  turns: TurnRun[];
  /** What the session came to; null when it never opened. */
  session: SessionObservation | null;
  duration_ms: number;
}

/** One scenario file as it ran. */
export interface FileRun {
  file: string;
  /** The agent file tested, and its id. */
  agent_file: string;
  agent_id: string;
  scenarios: ScenarioRun[];
}

/** The caller's text of a turn, or what its WAV file is (a voice run reads the audio instead). */
function callerLine(turn: Scenario['turns'][number]): string {
  return turn.caller ?? `(audio: ${turn.audio ?? ''})`;
}

/** The session values of `scenario`: its own over the file's, `now` as `context.now`. */
export function sessionInput(agentId: string, file: LoadedScenarioFile['scenarios'], scenario: Scenario): ScenarioSessionInput {
  const context: Record<string, unknown> = { ...(file.context ?? {}), ...(scenario.context ?? {}) };
  const now = scenario.now ?? file.now;
  if (now !== undefined) context.now = now;
  const customerName = scenario.customer_name ?? file.customer_name;
  return {
    agent_id: agentId,
    ...(customerName !== undefined ? { customer_name: customerName } : {}),
    ...(Object.keys(context).length > 0 ? { context } : {}),
  };
}

/** `{slot: value}` of the steps a session detail shows with a value (captured, and confirmed where the step confirms). */
function slotsOf(host: ScenarioHost, sessionId: string): Record<string, SlotValue> {
  const out: Record<string, SlotValue> = {};
  for (const s of host.detail(sessionId).session.steps) if (s.slot !== null && s.value !== null) out[s.slot] = s.value;
  return out;
}

/** The message of an error a session use case threw (`invalid_request: …`). */
function messageOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return typeof e?.code === 'string' ? `${e.code}: ${message}` : message;
}

/**
 * Why a session did not open. The daemon's refusal of an agent whose prompts speak values the
 * session lacks (`invalid_request`, param `customer_name` or `context.*`; app/session-values.ts)
 * tells an API caller to pass them in the request; here they are set in the scenario file.
 */
function openErrorOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; param?: unknown };
  const param = typeof e?.param === 'string' ? e.param : '';
  const needs = typeof e?.message === 'string' ? /^(agent \S+ needs [^:]+):/.exec(e.message) : null;
  if (e?.code !== 'invalid_request' || needs === null || !(param === 'customer_name' || param.startsWith('context.')))
    return messageOf(err);
  return `invalid_request: ${needs[1]}: set them in the scenario file (context: and customer_name:, for the whole file or in the scenario; docs/agent-tests.md)`;
}

/** Runs one scenario on `host` (where its agent `agentId` is put). */
export async function runScenario(host: ScenarioHost, loaded: LoadedScenarioFile, scenario: Scenario): Promise<ScenarioRun> {
  const started = performance.now();
  const run: ScenarioRun = { name: scenario.name, passed: false, failures: [], error: null, turns: [], session: null, duration_ms: 0 };
  const finish = (): ScenarioRun => {
    run.passed = run.error === null && run.failures.length === 0;
    run.duration_ms = Math.round(performance.now() - started);
    return run;
  };
  let sessionId: string;
  try {
    sessionId = (await host.open(sessionInput(loaded.agent.id, loaded.scenarios, scenario))).session_id;
  } catch (err) {
    run.error = `the session did not open: ${openErrorOf(err)}`;
    return finish();
  }
  let ended = false;
  for (const [i, turn] of scenario.turns.entries()) {
    const n = i + 1;
    if (turn.caller === undefined) {
      run.error = `turn ${n}: audio only (${turn.audio ?? ''}): add caller: with the words it says`;
      break;
    }
    let result;
    try {
      result = await host.turn(sessionId, turn.caller);
    } catch (err) {
      run.error = `turn ${n}: the session refused the turn: ${messageOf(err)}`;
      break;
    }
    const got: TurnObservation = {
      reply: result.text,
      step: result.state.cursor,
      layer: result.trace.layer,
      llm_used: result.trace.llm_used,
      slots: slotsOf(host, sessionId),
      // Said its last line (closing, a stop, goodbye, a hand-off), or ended outright: the
      // session itself stays open for its close grace (docs/agents.md "Close grace").
      ended: result.ended || result.state.cursor === CURSOR_CLOSING,
      cost_inr: result.cost.total_inr,
    };
    ended = got.ended;
    const failures = checkTurn(n, turn.expect, got);
    run.turns.push({ n, caller: callerLine(turn), ...got, failures });
    run.failures.push(...failures);
  }
  try {
    const end = await host.end(sessionId);
    const summary = end.summary as { outcome?: unknown; extracted?: Record<string, SlotValue> };
    run.session = {
      outcome: typeof summary.outcome === 'string' ? summary.outcome : null,
      slots: summary.extracted ?? {},
      ended,
      cost_inr: end.cost.total_inr,
    };
  } catch (err) {
    run.error ??= `the session did not end: ${messageOf(err)}`;
    return finish();
  }
  if (run.error === null) run.failures.push(...checkSession(scenario.expect, run.session));
  return finish();
}

/**
 * Runs every scenario of `loaded` on a fresh host from `openHost` (one per file, so files never
 * see each other's agents), closed after.
 * @throws Error when the agent is refused by the host although it validated locally (a bug)
 */
export async function runScenarioFile(
  loaded: LoadedScenarioFile,
  openHost: () => ScenarioHost,
  onScenario?: (run: ScenarioRun) => void,
): Promise<FileRun> {
  const host = openHost();
  try {
    await host.putAgent(loaded.agent.id, loaded.agent.source);
    const scenarios: ScenarioRun[] = [];
    for (const scenario of loaded.scenarios.scenarios) {
      const run = await runScenario(host, loaded, scenario);
      onScenario?.(run);
      scenarios.push(run);
    }
    return { file: loaded.file, agent_file: loaded.agent.file, agent_id: loaded.agent.id, scenarios };
  } finally {
    host.close();
  }
}

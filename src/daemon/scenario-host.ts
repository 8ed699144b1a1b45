/**
 * The in-process host `vagent agent test` runs its scenarios on (docs/agent-tests.md): the
 * daemon's own services over a fresh state dir in a temp folder — the same agent validation,
 * session use cases, engine, unit of work and metering a `/v1` session goes through — with no
 * HTTP, no speech synthesis (replies are text; the embedded voice costs nothing anyway) and no
 * telephony. Agents with an `llm` block call the language model the host is given (the
 * operator's `llm` settings, as `vagent serve` uses them: docs/llm.md), or none. Nothing is
 * written outside the temp folder, which {@link ScenarioHost.close} removes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SettingsSchema, type Settings } from '../config/schema.js';
import type { LanguageModel } from '../app/language-model.js';
import type { SessionEndResult, SessionOpened, TurnResult } from '../contract/index.js';
import type { SessionDetailView } from '../app/session-types.js';
import type { Principal } from '../app/context.js';
import { INTERNAL, type Committed } from '../app/unit-of-work.js';
import { openRuntime } from './runtime.js';

/** What a scenario's session opens with (as `POST /v1/sessions`). */
export interface ScenarioSessionInput {
  agent_id: string;
  customer_name?: string;
  context?: Record<string, unknown>;
}

/** A state dir of its own, with the session use cases of one tenant. */
export interface ScenarioHost {
  /**
   * Stores an agent definition as the tenant's current revision (as `PUT /v1/agents/{id}`).
   * @throws ApiError invalid_request for a definition the daemon would refuse
   */
  putAgent(agentId: string, definition: unknown): Promise<void>;
  /** Opens a session (as `POST /v1/sessions`). @throws ApiError as the endpoint (invalid_request for missing context, …) */
  open(input: ScenarioSessionInput): Promise<SessionOpened>;
  /** One caller turn (as `POST /v1/sessions/{id}/turn`). @throws ApiError as the endpoint */
  turn(sessionId: string, text: string): Promise<TurnResult>;
  /** Session detail (as `GET /v1/sessions/{id}`). */
  detail(sessionId: string): SessionDetailView;
  /** Ends a session (as `POST /v1/sessions/{id}/end`); an ended one gives its result again. */
  end(sessionId: string): Promise<SessionEndResult>;
  /** Closes the store and removes the temp folder. */
  close(): void;
}

/** The value of a step that committed (an internal scope is never replayed). */
function valueOf<V>(done: Committed<V>): V {
  if (done.replayed) throw new Error('an internal write was replayed');
  return done.value;
}

/** Options of {@link openScenarioHost}. */
export interface ScenarioHostOptions {
  /** The pricing costs are metered with (default: the shipped config/pricing.yaml). */
  pricingFile?: string;
  /** The model agents with an `llm` block call (default none: every such turn falls back to the rules). */
  languageModel?: LanguageModel;
  /** The `llm` settings the model was opened with: `timeout_ms` is the deadline of a turn's model step. */
  llm?: Settings['llm'];
}

/**
 * Opens a {@link ScenarioHost} over a new temp folder (`os.tmpdir()`): no example agents are
 * loaded, so only the agents put there exist.
 */
export function openScenarioHost(options: ScenarioHostOptions = {}): ScenarioHost {
  const { pricingFile, languageModel, llm } = options;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-agent-test-'));
  const noAgents = path.join(dir, 'no-agents');
  fs.mkdirSync(noAgents);
  let runtime;
  try {
    const settings = SettingsSchema.parse({
      state_dir: path.join(dir, 'state'),
      log_level: 'silent',
      agents_dir: noAgents,
      ...(pricingFile ? { pricing_file: pricingFile } : {}),
      ...(llm ? { llm } : {}),
    });
    runtime = openRuntime(settings, { recover: false, ...(languageModel ? { languageModel } : {}) });
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { services } = runtime;
  const principal: Principal = { tenantId: 'default', keyId: 'agent-test', requestId: 'agent-test', method: 'LOCAL', route: 'agent test' };
  return {
    async putAgent(agentId, definition) {
      await services.agents.put(principal, agentId, definition, INTERNAL);
    },
    async open(input) {
      return valueOf(await services.sessions.open(principal, input, INTERNAL));
    },
    async turn(sessionId, text) {
      return valueOf(await services.sessions.turn(principal, sessionId, { text }, INTERNAL));
    },
    detail(sessionId) {
      return services.sessions.detail(principal, sessionId);
    },
    async end(sessionId) {
      return valueOf(await services.sessions.end(principal, sessionId, INTERNAL, { endReason: 'api_hangup' }));
    },
    close() {
      try {
        runtime.close();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

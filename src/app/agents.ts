/**
 * Agents (docs/api-decisions.md "Agents"; docs/agents.md): `PUT/GET/DELETE /v1/agents/{agent_id}`,
 * `GET /v1/agents`. A definition is stored by digest; the tenant's agent row points at its
 * current revision, so open sessions keep the revision they started with.
 *
 * Functions named `*Tx` must run inside `Store.write`.
 */
import crypto from 'node:crypto';
import stringify from 'safe-stable-stringify';
import { formatIssuePath, parseAgentDefinition, type AgentDefinition } from '../domain/agent.js';
import { ApiError } from '../domain/errors.js';
import { isAgentId, shortId } from '../domain/ids.js';
import { voiceFailureMessage, voiceIdOf } from '../domain/voice.js';
import type { AgentAudioProgress, AgentSummary } from '../contract/index.js';
import { staticOpeningTexts, staticTexts } from '../engine/static-texts.js';
import { toSpokenText } from '../engine/spoken.js';
import { compileAgent, type CompiledAgent } from '../engine/state.js';
import type { AgentRow } from '../store/index.js';
import { scoped } from './access.js';
import type { Principal, ServiceDeps } from './context.js';
import type { Committed, Scope, Tx } from './unit-of-work.js';
import type { SpeechPort } from './speech-port.js';

/** The Agent resource (`GET /v1/agents/{id}`, with its definition) or a list entry (without). */
export type AgentView = AgentSummary & { definition?: AgentDefinition; warnings?: AgentWarning[] };

/** What an applied agent holds that is valid but likely a mistake: the field and what is wrong. */
export interface AgentWarning {
  /** The field path (`llm.model`). */
  param: string;
  message: string;
}

/** What {@link AgentService} checks an applied agent's `llm` block against. */
export interface AgentModelCheck {
  /** The daemon's default model (`llm.model`), or null. */
  defaultModel: () => string | null;
  /** True when `model` has a price in the price list (config/pricing.yaml). */
  priced: (model: string) => boolean;
}

/**
 * The warnings of an agent's `llm` block: a model (its own, else the daemon's default) without a
 * price in config/pricing.yaml, whose calls would be counted as costing 0 (docs/agents.md "LLM").
 */
export function llmWarnings(agent: AgentDefinition, check: AgentModelCheck | undefined): AgentWarning[] {
  if (!agent.llm || !check) return [];
  const model = agent.llm.model ?? check.defaultModel();
  if (model === null || check.priced(model)) return [];
  const whose = agent.llm.model === undefined ? `the daemon's default model ${model}` : `model ${model}`;
  return [
    {
      param: agent.llm.model === undefined ? 'llm' : 'llm.model',
      message: `${whose} has no price in the price list (config/pricing.yaml): its calls will cost 0 in costs and the daily budget`,
    },
  ];
}

/**
 * The warnings of an agent's `voice`: a cloud provider the daemon has no key for (`configured`,
 * the providers it speaks with; undefined: not known, no warning), whose lines the embedded voice
 * would speak (docs/agents.md "Voice").
 */
export function voiceWarnings(agent: AgentDefinition, configured: readonly string[] | undefined): AgentWarning[] {
  const voice = agent.voice;
  if (typeof voice !== 'object' || configured === undefined || configured.includes(voice.provider)) return [];
  const why = voiceFailureMessage(`fallback:${voice.provider}:not_configured`) ?? `${voice.provider} is not configured`;
  return [{ param: 'voice.provider', message: `${why}; the embedded voice speaks its lines instead` }];
}

/** Agent use cases. */
export class AgentService {
  private readonly compiled = new Map<string, CompiledAgent>();
  /**
   * Per revision: its voice, its static texts as spoken with their cache keys, and the first
   * `opening` of them, which are its opening's (immutable).
   */
  private readonly statics = new Map<string, { voice: string; texts: string[]; keys: string[]; opening: number }>();
  /** Per revision: its static texts that failed pre-synthesis, and the first cloud-voice failure's mark. */
  private readonly failures = new Map<string, { count: number; fallback?: string }>();
  /** Aborted by {@link AgentService.stopPresynthesis}: no pre-synthesis starts after that. */
  private readonly presynthesis = new AbortController();
  /** Pre-syntheses under way (the start-up sweep, one per agent applied). */
  private readonly presynthesizing = new Set<Promise<void>>();
  /** Told of each revision's opening clips once they are cached (see {@link AgentService.onOpeningReady}). */
  private openingListener: ((files: string[]) => void) | null = null;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly speech: SpeechPort,
    /** Checks an `llm` block's model against the price list (none: no warning is given). */
    private readonly modelCheck?: AgentModelCheck,
  ) {}

  /**
   * Validates an agent definition for `PUT /v1/agents/{agentId}`.
   * @returns the definition with defaults and its digest (SHA-256 of its canonical JSON).
   * @throws ApiError invalid_request naming every problem's field path (first one in `param`).
   */
  validate(agentId: string, body: unknown): { agent: AgentDefinition; digest: string } {
    if (!isAgentId(agentId)) throw malformedAgentId('invalid_request', agentId);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError('invalid_request', 'request body must be the agent definition as a JSON object');
    }
    const input = { ...(body as Record<string, unknown>) };
    if (input.id === undefined) input.id = agentId;
    else if (input.id !== agentId)
      throw new ApiError('invalid_request', `id ${shortId(String(input.id))} in the body differs from ${agentId} in the path`, {
        param: 'id',
      });
    const r = parseAgentDefinition(input);
    if (!r.ok) {
      const shown = r.issues.slice(0, 10).map((i) => `${formatIssuePath(i.path)}: ${i.message}`);
      if (r.issues.length > 10) shown.push(`… and ${r.issues.length - 10} more`);
      throw new ApiError('invalid_request', `invalid agent definition: ${shown.join('; ')}`, {
        param: formatIssuePath(r.issues[0]!.path),
      });
    }
    return { agent: r.agent, digest: digestOf(r.agent) };
  }

  /**
   * Creates or replaces an agent (`PUT /v1/agents/{agent_id}`): validated, stored as the
   * tenant's current revision in one step of the unit of work, then its static texts
   * pre-synthesised in the background (`onPresynthesisError` hears of a failure). The view
   * carries `warnings` ({@link llmWarnings}, {@link voiceWarnings}) when there are any.
   * @throws ApiError as {@link validate}.
   */
  async put(
    principal: Principal,
    agentId: string,
    body: unknown,
    scope: Scope,
    onPresynthesisError?: (err: unknown) => void,
  ): Promise<Committed<AgentView>> {
    const { agent, digest } = this.validate(agentId, body);
    const warnings = [...llmWarnings(agent, this.modelCheck), ...voiceWarnings(agent, this.speech.cloudProviders)];
    const done = await this.deps.uow.run(scope, (tx) => {
      const view = this.putTx(tx, principal.tenantId, agent, digest);
      return warnings.length > 0 ? { ...view, warnings } : view;
    });
    this.presynthesize(digest).catch((err: unknown) => onPresynthesisError?.(err));
    return done;
  }

  /** Stores `agent` as the tenant's current revision (version +1 unless identical). */
  putTx(_tx: Tx, tenantId: string, agent: AgentDefinition, digest: string): AgentView {
    const repo = this.deps.repos.agents;
    const now = this.deps.nowS();
    const prev = repo.get(tenantId, agent.id);
    repo.putRevision(digest, JSON.stringify(agent), now);
    let row: AgentRow;
    if (prev && prev.digest === digest) row = prev;
    else {
      row = {
        tenant_id: tenantId,
        id: agent.id,
        version: (prev?.version ?? 0) + 1,
        digest,
        created_at: prev?.created_at ?? now,
        updated_at: now,
      };
      repo.upsert(row);
    }
    return this.view(row, true);
  }

  /**
   * Synthesises the static texts of revision `digest` in the background (progress shows in
   * `audio`). Does nothing once {@link AgentService.stopPresynthesis} was called.
   *
   * @throws Error (rejects) when the revision is missing from the store
   */
  presynthesize(digest: string): Promise<void> {
    return this.track(async () => {
      await this.presynthesizeOpening(digest);
      await this.presynthesizeTexts(digest);
    });
  }

  /**
   * Pre-synthesises every current agent revision (daemon start-up: the cache may have been
   * cleared, or agents applied while speech was off): the openings of all of them first, so
   * that a call arriving meanwhile finds its opening ready whichever agent it is for, then
   * each revision's other texts, one revision after another. Stops between texts and between
   * agents once {@link AgentService.stopPresynthesis} was called.
   */
  presynthesizeAll(): Promise<void> {
    return this.track(async () => {
      const digests = this.deps.repos.agents.currentDigests();
      for (const digest of digests) {
        if (this.presynthesis.signal.aborted) return;
        await this.presynthesizeOpening(digest);
      }
      for (const digest of digests) {
        if (this.presynthesis.signal.aborted) return;
        await this.presynthesizeTexts(digest);
      }
    });
  }

  /**
   * Registers the listener told, during pre-synthesis, of each revision's opening clips once
   * they are cached: the absolute paths of their WAV files (the static ones; a line with
   * placeholders is rendered per session). The media runtime converts them ahead of the first
   * call (docs/media.md, "The first call after start"). One listener; a new one replaces it.
   */
  onOpeningReady(listener: (files: string[]) => void): void {
    this.openingListener = listener;
  }

  /** Synthesises every static text of revision `digest` not cached yet, counting failures for its `audio`. */
  private async presynthesizeTexts(digest: string): Promise<void> {
    const { voice, texts } = this.staticsOf(digest);
    const { failed, fallback } = await this.speech.prepare(texts, voice, { signal: this.presynthesis.signal });
    if (failed > 0) this.failures.set(digest, fallback === undefined ? { count: failed } : { count: failed, fallback });
    else this.failures.delete(digest);
  }

  /**
   * The WAV files of every current agent revision's static opening clips that are cached now
   * (absolute paths; after a restart, usually all of them): what the media workers convert
   * before the daemon listens (docs/media.md, "The first call after start").
   */
  cachedOpeningFiles(): string[] {
    return [...new Set(this.deps.repos.agents.currentDigests().flatMap((d) => this.openingFiles(d)))];
  }

  /** The files of revision `digest`'s static opening clips that are cached. */
  private openingFiles(digest: string): string[] {
    const { keys, opening } = this.staticsOf(digest);
    return keys
      .slice(0, opening)
      .filter((k) => this.speech.has(k))
      .map((k) => this.speech.fileOf(this.speech.nameOf(k)))
      .filter((f): f is string => f !== null);
  }

  /** Synthesises the static texts of revision `digest`'s opening, then tells the listener of their files. */
  private async presynthesizeOpening(digest: string): Promise<void> {
    const { voice, texts, opening } = this.staticsOf(digest);
    if (opening === 0) return;
    await this.speech.prepare(texts.slice(0, opening), voice, { signal: this.presynthesis.signal });
    const files = this.openingFiles(digest);
    if (files.length > 0) this.openingListener?.(files);
  }

  /**
   * Stops pre-synthesis for good (daemon shutdown, before the store closes: pre-synthesis
   * reads agent revisions from it). No text or agent starts after this call; resolves when
   * the syntheses under way have settled (closing the speech engine meanwhile makes that
   * immediate). Never rejects.
   */
  async stopPresynthesis(): Promise<void> {
    this.presynthesis.abort();
    await Promise.allSettled([...this.presynthesizing]);
  }

  /** Runs `job` unless pre-synthesis is stopped, keeping it in the set of jobs under way. */
  private track(job: () => Promise<void>): Promise<void> {
    if (this.presynthesis.signal.aborted) return Promise.resolve();
    const running = job().finally(() => this.presynthesizing.delete(running));
    this.presynthesizing.add(running);
    return running;
  }

  /** The caller's agents, by id. */
  list(principal: Principal): AgentView[] {
    return this.deps.repos.agents.list(principal.tenantId).map((r) => this.view(r, false));
  }

  /** One agent with its definition. @throws ApiError workflow_not_found (malformed), not_found. */
  get(principal: Principal, agentId: string): AgentView {
    return this.view(this.resolve(principal, agentId), true);
  }

  /** Deletes an agent (`DELETE /v1/agents/{agent_id}`). @throws ApiError workflow_not_found, not_found. */
  delete(principal: Principal, agentId: string, scope: Scope): Promise<Committed<{ id: string; deleted: true }>> {
    return this.deps.uow.run(scope, (tx) => this.deleteTx(tx, principal, agentId));
  }

  /** Deletes an agent; sessions already open keep running on their revision. */
  deleteTx(_tx: Tx, principal: Principal, agentId: string): { id: string; deleted: true } {
    const row = this.resolve(principal, agentId);
    this.deps.repos.agents.delete(row.tenant_id, row.id);
    return { id: row.id, deleted: true };
  }

  /**
   * The agent row visible to the caller (own tenant first; another tenant's only in audit mode).
   * @throws ApiError workflow_not_found for a malformed id, not_found for a missing or foreign one.
   */
  resolve(principal: Principal, agentId: string): AgentRow {
    if (!isAgentId(agentId)) throw malformedAgentId('workflow_not_found', agentId);
    const repo = this.deps.repos.agents;
    const row = repo.get(principal.tenantId, agentId) ?? scoped(this.deps, principal, repo.getAnyTenant(agentId), agentId);
    if (!row)
      throw new ApiError('not_found', `no agent ${agentId} (see: GET /v1/agents, or apply one with \`vagent agent apply -f FILE\`)`, {
        param: 'agent_id',
      });
    return row;
  }

  /** The compiled agent of revision `digest` (cached). @throws Error when the revision is missing. */
  compiledRevision(digest: string): CompiledAgent {
    let c = this.compiled.get(digest);
    if (!c) {
      const json = this.deps.repos.agents.revision(digest);
      if (json === undefined) throw new Error(`agent revision ${digest} is missing`);
      c = compileAgent(JSON.parse(json) as AgentDefinition);
      this.compiled.set(digest, c);
    }
    return c;
  }

  /**
   * The voice id of an agent (`voiceIdOf`, src/domain/voice.ts): its own voice (embedded or
   * cloud), or the embedded engine's voice for its language.
   */
  voiceOf(agent: CompiledAgent): string {
    const { voice, language } = agent.def;
    return voice !== undefined ? voiceIdOf(voice, language) : this.speech.voiceFor(language);
  }

  /** The revision's static texts as spoken, and their cache keys: worked out once per revision. */
  private staticsOf(digest: string): { voice: string; texts: string[]; keys: string[]; opening: number } {
    let s = this.statics.get(digest);
    if (!s) {
      const agent = this.compiledRevision(digest);
      const voice = this.voiceOf(agent);
      const spoken = (list: string[]): string[] => [...new Set(list.map((t) => toSpokenText(t, agent.def.language)))];
      // staticTexts lists the opening's texts first: the first `opening` spoken texts are theirs.
      const texts = spoken(staticTexts(agent));
      const opening = spoken(staticOpeningTexts(agent)).length;
      s = { voice, texts, keys: texts.map((t) => this.speech.keyFor(t, voice)), opening };
      this.statics.set(digest, s);
    }
    return s;
  }

  private audioStatus(digest: string): AgentAudioProgress {
    const { keys } = this.staticsOf(digest);
    let ready = 0;
    for (const k of keys) if (this.speech.has(k)) ready += 1;
    const f = this.failures.get(digest);
    const failed = Math.min(f?.count ?? 0, keys.length - ready);
    const failure = failed > 0 && f?.fallback !== undefined ? voiceFailureMessage(f.fallback) : null;
    return { total: keys.length, ready, failed, ...(failure !== null ? { failure: `voice: ${failure}` } : {}) };
  }

  private view(row: AgentRow, withDefinition: boolean): AgentView {
    const agent = this.compiledRevision(row.digest);
    const d = agent.def;
    return {
      id: row.id,
      name: d.name,
      description: d.description ?? null,
      direction: d.direction,
      language: d.language,
      version: row.version,
      digest: row.digest,
      created_at: row.created_at,
      updated_at: row.updated_at,
      audio: this.audioStatus(row.digest),
      ...(withDefinition ? { definition: d } : {}),
    };
  }
}

function malformedAgentId(code: 'invalid_request' | 'workflow_not_found', agentId: string): ApiError {
  return new ApiError(code, `agent id ${shortId(agentId)} is malformed: ag_ followed by 1–64 of a-z, 0-9 and _`, {
    param: 'agent_id',
  });
}

/** SHA-256 (hex) of an agent definition's canonical JSON (keys sorted). */
export function digestOf(agent: AgentDefinition): string {
  return crypto
    .createHash('sha256')
    .update(stringify(agent) ?? '')
    .digest('hex');
}

/**
 * `vagent agent apply|list|show|rm` (docs/agents.md, docs/api-decisions.md "Agents"; `PUT/GET/DELETE /v1/agents/{agent_id}`).
 *
 * `apply` checks every file locally first (positions from src/cli/agent-file.ts); a file with
 * a problem is not sent. Warnings (a `{{context.x}}` neither required nor defaulted) go to
 * stderr and do not stop the file. Applied agents are then watched until the daemon has pre-synthesised
 * their static texts.
 */
import type { Agent, AgentAudioProgress, VagentClient } from '../../client/index.js';
import { ApiResponseError } from '../../client/index.js';
import type { AgentDefinition } from '../../domain/agent.js';
import { DEFAULT_SARVAM_SPEAKER, DEFAULT_VOICE_MODEL, type CloudVoiceProvider } from '../../domain/voice.js';
import { usesCustomerName } from '../../engine/context-needs.js';
import type { AgentFileProblem, ValidAgentFile } from '../agent-file.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { confirmDelete, type DeleteFlags } from '../prompt.js';
import {
  bold,
  dim,
  failed,
  formatTime,
  hint,
  ok,
  orDash,
  plural,
  printFields,
  printJson,
  printTable,
  problem,
  progressBar,
  say,
} from '../output.js';
import { checkId } from './ids.js';

/** Flags of `vagent agent apply`. */
export interface AgentApplyFlags {
  /** `-f`: files or directories, in order. */
  file: string[];
  /** false with `--no-wait`. */
  wait: boolean;
  dryRun?: boolean;
}

/** Flags of `vagent agent show`. */
export interface AgentShowFlags {
  yaml?: boolean;
}

/** How often `apply` asks for pre-synthesis progress, in milliseconds. */
const POLL_MS = 200;
/** How long `apply` waits for pre-synthesis before leaving it to the background, in milliseconds. */
const WAIT_LIMIT_MS = 5 * 60_000;
/** Above this many clips, a progress bar is shown while waiting (on a terminal). */
const BAR_ABOVE = 20;

const settled = (a: AgentAudioProgress | undefined): boolean => !a || a.ready + a.failed >= a.total;

/** Polls `GET /v1/agents/{id}` until every clip is ready or failed, or {@link WAIT_LIMIT_MS} passes. */
async function waitForAudio(client: VagentClient, agent: Agent): Promise<Agent> {
  const bar = agent.audio && agent.audio.total > BAR_ABOVE ? progressBar(`${agent.id} pre-synthesising`) : null;
  const deadline = Date.now() + WAIT_LIMIT_MS;
  let current = agent;
  try {
    while (!settled(current.audio) && Date.now() < deadline) {
      bar?.update(current.audio.ready + current.audio.failed, current.audio.total);
      await new Promise((r) => setTimeout(r, POLL_MS));
      current = await client.getAgent(agent.id);
    }
  } finally {
    bar?.clear();
  }
  return current;
}

function appliedLine(agent: Agent, waited: boolean): string {
  const a = agent.audio;
  if (!a) return `${agent.id} applied (version ${agent.version})`;
  if (!waited)
    return `${agent.id} applied (version ${agent.version}; pre-synthesis of ${plural(a.total, 'clip')} continues in the background)`;
  const failures = a.failed > 0 ? `, ${a.failed} failed` : '';
  const pending = a.total - a.ready - a.failed;
  const rest = pending > 0 ? `, ${pending} still in progress` : '';
  return `${agent.id} applied (version ${agent.version}, ${plural(a.ready, 'clip')} pre-synthesised${failures}${rest})`;
}

/** Sends one valid file; a 400 from the daemon becomes a located problem instead of an exception. */
async function put(client: VagentClient, f: ValidAgentFile): Promise<Agent | AgentFileProblem> {
  try {
    return await client.applyAgent(f.id, f.source);
  } catch (err) {
    if (!(err instanceof ApiResponseError) || err.status !== 400) throw err;
    const field = err.param ?? [];
    const message = err.param && err.message.startsWith(`${err.param}: `) ? err.message.slice(err.param.length + 2) : err.message;
    return f.problemAt(field, `${err.code}: ${message}`);
  }
}

/**
 * `vagent agent apply -f FILE|DIR …`: validates locally, PUTs the valid files, then waits for
 * pre-synthesis (unless `--no-wait`).
 * @throws CliError when any file was not applied (the others are applied regardless): exit 2
 *   (`bad_arguments`) when a path could not be read (missing, unreadable, a directory without
 *   agent files), else exit 1
 */
export async function apply(ctx: CommandContext, flags: AgentApplyFlags): Promise<void> {
  const { loadAgentFiles, problemDetail, problemLocation } = await import('../agent-file.js');
  const report = (p: AgentFileProblem): void => problem(problemLocation(p), problemDetail(p));
  const { files, problems } = loadAgentFiles(flags.file);
  problems.forEach(report);
  let failures = problems.length;
  const valid: ValidAgentFile[] = [];
  for (const f of files) {
    if (f.ok) valid.push(f);
    else {
      f.problems.forEach(report);
      failures++;
    }
  }
  // Valid but likely a mistake (a prompt that may speak a blank): said, never refused.
  for (const f of valid) for (const w of f.warnings) problem(problemLocation(w), `warning: ${problemDetail(w)}`);
  const total = failures + valid.length;
  const unreadable = [...problems, ...files.flatMap((f) => (f.ok ? [] : f.problems))].some((p) => p.unreadable);
  const verdict = () => {
    if (failures > 0) {
      throw new CliError(
        `${failures} of ${total} agent files ${flags.dryRun ? 'invalid' : 'not applied'}`,
        unreadable ? EXIT.usage : EXIT.error,
        undefined,
        // a file read and refused is what the daemon refuses too (README.md "Exit codes")
        unreadable ? 'bad_arguments' : 'invalid_request',
      );
    }
  };

  if (flags.dryRun) {
    if (ctx.json) printJson(valid.map((f) => f.agent));
    else for (const f of valid) ok(`${f.file}: ${f.id} is valid ${dim('(dry run: nothing sent)')}`);
    return verdict();
  }

  const applied: Agent[] = [];
  const sources: ValidAgentFile[] = [];
  if (valid.length > 0) {
    const client = await ctx.client();
    for (const f of valid) {
      const res = await put(client, f);
      if ('file' in res) {
        report(res);
        failed(`${f.file}: ${f.id} not applied`);
        failures++;
      } else {
        // The daemon's own warnings (an `llm.model` without a price), placed in the file.
        for (const w of res.warnings ?? []) {
          const at = f.problemAt(w.param, w.message);
          problem(problemLocation(at), `warning: ${problemDetail(at)}`);
        }
        applied.push(res);
        sources.push(f);
      }
    }
    for (const [i, agent] of applied.entries()) {
      const final = flags.wait ? await waitForAudio(client, agent) : agent;
      applied[i] = final;
      if (!ctx.json) ok(appliedLine(final, flags.wait));
      // Why the cloud voice failed (no key, a 401, a bad speaker), placed at the file's `voice`.
      const toldVoice = (agent.warnings ?? []).some((w) => w.param.startsWith('voice'));
      if (!ctx.json && final.audio?.failure && !toldVoice) {
        const at = sources[i]!.problemAt('voice', final.audio.failure.replace(/^voice: /, ''));
        problem(problemLocation(at), `warning: ${problemDetail(at)}`);
      }
      if (!ctx.json && flags.wait && !settled(final.audio)) hint(`follow it with: vagent agent show ${final.id}`);
    }
  }
  if (ctx.json) printJson(applied);
  return verdict();
}

/** `vagent agent list`. */
export async function list(ctx: CommandContext): Promise<void> {
  const res = await (await ctx.client()).listAgents();
  if (ctx.json) return printJson(res);
  await printTable(
    res.data,
    [
      { header: 'ID', cell: (a) => a.id },
      { header: 'NAME', cell: (a) => a.name },
      { header: 'DIRECTION', cell: (a) => a.direction },
      { header: 'LANGUAGE', cell: (a) => a.language },
      { header: 'VERSION', cell: (a) => String(a.version) },
      { header: 'UPDATED', cell: (a) => formatTime(a.updated_at) },
    ],
    'No agents yet. Apply one: vagent agent apply -f config/agents/ag_clinic_booking.yaml',
  );
}

interface StepView {
  id?: string;
  ask?: string;
  confirm?: string;
  optional?: boolean;
  capture?: { slot?: string; type?: string };
}

function audioLine(a: AgentAudioProgress | undefined): string {
  if (!a) return dim('-');
  const failures = a.failed > 0 ? `, ${a.failed} failed` : '';
  return `${a.ready}/${a.total} clips ready${failures}${a.failure ? ` (${a.failure})` : ''}`;
}

/** An agent's `voice` as `show` prints it: the embedded voice's name, or `provider speaker|voice_id (model)`. */
function voiceLine(voice: unknown): string {
  if (typeof voice === 'string') return `${voice} ${dim('(embedded)')}`;
  if (voice === null || typeof voice !== 'object') return dim('embedded, for the language');
  const v = voice as { provider?: string; speaker?: string; voice_id?: string; model?: string };
  const name = v.speaker ?? v.voice_id ?? (v.provider === 'sarvam' ? DEFAULT_SARVAM_SPEAKER : '?');
  const provider = v.provider ?? '?';
  const model = v.model ?? (provider in DEFAULT_VOICE_MODEL ? DEFAULT_VOICE_MODEL[provider as CloudVoiceProvider] : '?');
  return `${provider} ${name} (${model})`;
}

/**
 * What a session of the agent must bring (`required_context`, and `customer_name` when a prompt
 * says it) and the context keys it has defaults for (docs/agents.md "Context").
 */
function contextFields(def: Record<string, unknown>): Array<[string, string]> {
  const needs = (Array.isArray(def.required_context) ? (def.required_context as string[]) : []).map((k) => `context.${k}`);
  if (Array.isArray(def.opening) && usesCustomerName(def as unknown as AgentDefinition)) needs.push('customer_name');
  const defaults = def.context_defaults && typeof def.context_defaults === 'object' ? Object.keys(def.context_defaults) : [];
  return [
    ['needs', needs.length ? needs.join(', ') : dim('-')],
    ['defaults', defaults.length ? defaults.map((k) => `context.${k}`).join(', ') : dim('-')],
  ];
}

/** `vagent agent show ID`: fields (with what a session must bring) and steps; `--json` the Agent, `--yaml` its definition as YAML. */
export async function show(ctx: CommandContext, id: string, flags: AgentShowFlags = {}): Promise<void> {
  const agent = await (await ctx.client()).getAgent(checkId('agent', id));
  if (flags.yaml) {
    const { stringify } = await import('yaml');
    process.stdout.write(stringify(agent.definition, { lineWidth: 0 }));
    return;
  }
  if (ctx.json) return printJson(agent);
  const def = agent.definition ?? {};
  const faq = Array.isArray(def.faq) ? (def.faq as Array<{ intent?: string }>).map((f) => f.intent ?? '?') : [];
  printFields([
    ['id', agent.id],
    ['name', agent.name],
    ['description', orDash(agent.description)],
    ['direction', agent.direction],
    ['language', agent.language],
    ['voice', voiceLine(def.voice)],
    ['version', String(agent.version)],
    ['digest', agent.digest ? `sha256:${agent.digest.slice(0, 16)}…` : dim('-')],
    ['audio', audioLine(agent.audio)],
    ['faq', faq.length ? faq.join(', ') : dim('-')],
    ...contextFields(def),
    ['created', formatTime(agent.created_at)],
    ['updated', formatTime(agent.updated_at)],
  ]);
  const steps = Array.isArray(def.steps) ? (def.steps as StepView[]) : [];
  say();
  say(bold('Steps'));
  await printTable(
    steps,
    [
      { header: 'STEP', cell: (s) => s.id ?? '?' },
      { header: 'SLOT', cell: (s) => orDash(s.capture?.slot) },
      { header: 'TYPE', cell: (s) => orDash(s.capture?.type) },
      { header: 'CONFIRM', cell: (s) => (s.confirm && s.confirm !== 'none' ? s.confirm : dim('-')) },
      { header: 'OPTIONAL', cell: (s) => (s.optional ? 'yes' : dim('no')) },
      { header: 'ASK', cell: (s) => (s.ask && s.ask.length > 60 ? `${s.ask.slice(0, 59)}…` : orDash(s.ask)) },
    ],
    'No steps: the agent only says its opening and closing.',
  );
}

/**
 * `vagent agent rm ID [--yes]`: asks first on a terminal (see {@link confirmDelete}).
 * @throws UsageError (exit 2) without a terminal and without `--yes`.
 */
export async function rm(ctx: CommandContext, id: string, flags: DeleteFlags = {}): Promise<void> {
  checkId('agent', id);
  await confirmDelete(`agent ${id}`, flags.yes);
  const res = await (await ctx.client()).deleteAgent(id);
  if (ctx.json) return printJson(res);
  ok(`agent ${res.id} removed`);
}

/**
 * `vagent agent test FILE|DIR …` (docs/agent-tests.md): runs the conversation scenarios of
 * scenario files against the agent files they name, through the daemon's own session services
 * in-process over a temp state dir (src/daemon/scenario-host.ts) — no daemon needed, nothing
 * written outside the temp dir but the reports asked for (`--junit FILE`, `--update`). Agents
 * with an `llm` block call the operator's language model (the `llm` settings of `vagent serve`:
 * config file and VAGENT_LLM_* environment, docs/llm.md) unless `--no-llm`. `--voice` says the
 * caller's lines on simulated phone calls to an ephemeral daemon instead (agent-test/voice-run.ts).
 *
 * Exit codes: 0 every scenario passed; 1 a scenario failed; 2 bad input — a file that cannot be
 * read, or a scenario or agent file with a problem (each printed as FILE:LINE:COL: field:
 * message, and nothing is run; `--junit` then reports it as one failed test case).
 */
import fs from 'node:fs';
import { openScenarioHost, type ScenarioHost, type ScenarioHostOptions } from '../../daemon/scenario-host.js';
import { ConfigError, loadSettings } from '../../config/load.js';
import { expandAgentPaths, problemDetail, problemLocation, type AgentFileProblem } from '../agent-file.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { hint, printJson, problem, say } from '../output.js';
import { checkWritable, writeFileWhole } from '../out-file.js';
import { loadScenarioFile, type LoadedScenarioFile } from '../agent-test/scenario-file.js';
import { runScenarioFile, type FileRun } from '../agent-test/run.js';
import { callerLineFromWav, CallerWavError } from '../simulator/sim-audio.js';
import { fileHeading, jsonReport, junitInputErrorXml, junitXml, scenarioLines, totalsLine, totalsOf } from '../agent-test/report.js';

/** Flags of `vagent agent test`. */
export interface AgentTestFlags {
  /** `--junit FILE`: where the JUnit XML report is written. */
  junit?: string;
  /** `--update`: record what passing scenarios produced as expectations of turns that have none. */
  update?: boolean;
  /** `--no-llm` sets false: agents' `llm` blocks call no model (their turns fall back to the rules). */
  llm?: boolean;
  /** `--config FILE`: the settings file the `llm` settings are read from (default VAGENT_CONFIG). */
  config?: string;
  /** `--voice`: say the caller's lines through a call's media path (docs/agent-tests.md "Voice"). */
  voice?: boolean;
}

/** The language model a run uses, as the report names it. */
export interface RunModel {
  /** The model agents without one of their own use (`llm.model`), or null. */
  model: string | null;
  /** The endpoint's host (never its path or key), or null when no model is used. */
  host: string | null;
  /** One line for people: which model, or why none. */
  notice: string;
}

/**
 * The operator's language model for agents with an `llm` block: the `llm` settings `vagent serve`
 * reads (the config file of `--config` or VAGENT_CONFIG, then VAGENT_LLM_* from the
 * environment; docs/llm.md "Settings"), or none with `--no-llm`.
 * @throws UsageError (exit 2) for settings `vagent serve` would refuse
 */
async function runModelOf(flags: AgentTestFlags): Promise<{ host: Omit<ScenarioHostOptions, 'pricingFile'>; model: RunModel }> {
  if (flags.llm === false) return { host: {}, model: { model: null, host: null, notice: 'language model: off (--no-llm)' } };
  let settings;
  try {
    settings = loadSettings(flags.config !== undefined ? { config: flags.config } : {});
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const { llm } = settings;
  if (!llm.base_url) {
    return {
      host: {},
      model: {
        model: null,
        host: null,
        notice: "language model: none configured (llm.base_url, VAGENT_LLM_BASE_URL): agents' llm blocks fall back to their rules",
      },
    };
  }
  const { openLanguageModel } = await import('../../daemon/language-model.js');
  let host: string;
  try {
    host = new URL(llm.base_url).host;
  } catch {
    host = 'the configured endpoint';
  }
  const name = llm.model ?? '(each agent names its model)';
  return {
    host: { languageModel: await openLanguageModel(llm), llm },
    model: { model: llm.model ?? null, host, notice: `language model: ${name} at ${host}` },
  };
}

/**
 * Bad input of `agent test`: `summary` ("1 of 3 scenario files have problems: nothing was run")
 * and each problem as a `FILE:LINE:COL: field: message` line. Exit 2 (`bad_arguments`) for a
 * path that cannot be read or a problem in a scenario file; exit 1 (`invalid_request`) when the
 * only problems are in the agent files they name, as `vagent agent apply` exits for an agent file
 * the daemon would refuse (README.md "Exit codes": one mistake, one exit code).
 */
class ScenarioInputError extends CliError {
  constructor(
    message: string,
    readonly summary: string,
    readonly problems: string[],
    hint: string | undefined,
    agentFilesOnly: boolean,
  ) {
    super(message, agentFilesOnly ? EXIT.error : EXIT.usage, hint, agentFilesOnly ? 'invalid_request' : 'bad_arguments');
    this.name = 'ScenarioInputError';
  }
}

/**
 * Loads every scenario file `paths` name; prints each problem on stderr and throws when there
 * is any. With `json` nothing is printed: the problems are part of the error's message, so the
 * error is one JSON line on stderr (README.md "Exit codes").
 * @throws ScenarioInputError exit 2, or 1 when only agent files have problems
 */
function loadAll(paths: string[], voice: boolean, json: boolean): LoadedScenarioFile[] {
  const { files, problems } = expandAgentPaths(paths);
  const all: AgentFileProblem[] = [...problems];
  const loaded: LoadedScenarioFile[] = [];
  let agentFilesOnly = problems.length === 0;
  for (const file of files) {
    const r = loadScenarioFile(file);
    if (!r.ok) {
      all.push(...r.problems);
      agentFilesOnly &&= r.agentFileOnly === true;
      continue;
    }
    // A turn given only as audio needs the call's media path, which a text run does not go
    // through; a voice run reads every audio file before anything runs.
    const audioOnly = r.scenarios.scenarios.flatMap((s, i) =>
      s.turns.flatMap((t, j) => {
        const at = ['scenarios', i, 'turns', j, 'audio'];
        if (voice) {
          const problem = t.audio === undefined ? null : wavProblem(r.resolve(t.audio));
          return problem === null ? [] : [r.problemAt(at, problem)];
        }
        return t.caller === undefined
          ? [r.problemAt(at, 'a turn given only as audio cannot run as text: add caller: with its words, or run with --voice')]
          : [];
      }),
    );
    if (audioOnly.length > 0) {
      all.push(...audioOnly);
      agentFilesOnly = false;
    } else loaded.push(r);
  }
  if (!json) for (const p of all) problem(problemLocation(p), problemDetail(p));
  if (all.length > 0) {
    const bad = files.length - loaded.length + problems.length;
    const head = `${bad} of ${files.length + problems.length} scenario files have problems: nothing was run`;
    const lines = all.map((p) => `${problemLocation(p)}: ${problemDetail(p)}`);
    throw new ScenarioInputError(
      json ? `${head}: ${lines.join('; ')}` : head,
      head,
      lines,
      'each problem is printed above as FILE:LINE:COL: field: message (docs/agent-tests.md)',
      agentFilesOnly,
    );
  }
  return loaded;
}

/** Why the WAV file `file` cannot be a caller line, or null when it can. */
function wavProblem(file: string): string | null {
  try {
    callerLineFromWav(fs.readFileSync(file));
    return null;
  } catch (err) {
    if (err instanceof CallerWavError) return `${file}: ${err.message}`;
    return `${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
  }
}

/**
 * `vagent agent test FILE|DIR … [--junit FILE] [--update]`.
 * @throws CliError exit 2 for bad input (nothing run); CliError exit 1 (code
 *   `test_failed`) when a scenario failed
 */
export async function test(ctx: CommandContext, paths: string[], flags: AgentTestFlags): Promise<void> {
  // Before anything runs: a report that cannot be written is told now, not after every scenario.
  if (flags.junit) checkWritable(flags.junit, 'the JUnit report');
  let loaded: LoadedScenarioFile[];
  try {
    loaded = loadAll(paths, flags.voice === true, ctx.json);
  } catch (err) {
    // The report is written whatever the result (docs/agent-tests.md): bad input is one failed test case.
    if (flags.junit && err instanceof ScenarioInputError) {
      try {
        writeFileWhole(flags.junit, junitInputErrorXml(err.summary, err.problems), 'the JUnit report');
      } catch {
        // the bad input is the error to report; a report that cannot be written is secondary
      }
    }
    throw err;
  }
  const { host: hostOptions, model } = await runModelOf(flags);
  if (!ctx.json) say(model.notice);
  if (flags.voice) {
    const { runVoice } = await import('../agent-test/voice-run.js');
    const runs = await runVoice(ctx, loaded, hostOptions);
    return finishRun(ctx, loaded, runs, flags, model);
  }
  const runs: FileRun[] = [];
  // Ctrl-C: the open host's temp state dir is removed, then the signal ends the process as it
  // would have (exit 130), with no listener left to catch it.
  let host: ScenarioHost | null = null;
  const onInterrupt = (): void => {
    try {
      host?.close();
    } finally {
      process.kill(process.pid, 'SIGINT');
    }
  };
  process.once('SIGINT', onInterrupt);
  try {
    for (const file of loaded) {
      if (!ctx.json) say(fileHeading({ file: file.file, agent_id: file.agent.id, agent_file: file.agent.file }));
      const open = (): ScenarioHost => (host = openScenarioHost(hostOptions));
      runs.push(
        await runScenarioFile(file, open, (run) => {
          if (!ctx.json) for (const line of scenarioLines(run)) say(line);
        }),
      );
      host = null;
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
  return finishRun(ctx, loaded, runs, flags, model);
}

/**
 * Writes the reports of a run and says how it went.
 * @throws CliError exit 1 (code `test_failed`) when a scenario failed; exit 2 when a report cannot be written
 */
async function finishRun(
  ctx: CommandContext,
  loaded: LoadedScenarioFile[],
  runs: FileRun[],
  flags: AgentTestFlags,
  model: RunModel,
): Promise<void> {
  if (flags.junit) writeFileWhole(flags.junit, junitXml(runs), 'the JUnit report');
  const totals = totalsOf(runs);
  if (ctx.json) printJson({ ...jsonReport(runs), llm: { model: model.model, host: model.host } });
  else say(totalsLine(totals));
  if (flags.update) {
    const { updateFile } = await import('../agent-test/update.js');
    for (const [i, file] of loaded.entries()) {
      const outcome = updateFile(file, runs[i]!);
      if (outcome.text !== null) writeFileWhole(file.file, outcome.text, 'the scenario file');
      if (!ctx.json) hint(outcome.message);
    }
  }
  if (flags.junit && !ctx.json) hint(`JUnit report written to ${flags.junit}`);
  if (totals.failed > 0) {
    throw new CliError(`${totals.failed} of ${totals.scenarios} scenarios failed`, EXIT.error, undefined, 'test_failed');
  }
}

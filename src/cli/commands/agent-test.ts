/**
 * `vagent agent test FILE|DIR …` (docs/agent-tests.md): runs the conversation scenarios of
 * scenario files against the agent files they name, through the daemon's own session services
 * in-process over a temp state dir (src/daemon/scenario-host.ts) — no daemon needed, nothing
 * written outside the temp dir but the reports asked for (`--junit FILE`, `--update`).
 *
 * Exit codes: 0 every scenario passed; 1 a scenario failed; 2 bad input — a file that cannot be
 * read, or a scenario or agent file with a problem (each printed as FILE:LINE:COL: field:
 * message, and nothing is run; `--junit` then reports it as one failed test case).
 */
import fs from 'node:fs';
import path from 'node:path';
import { openScenarioHost, type ScenarioHost } from '../../daemon/scenario-host.js';
import { expandAgentPaths, problemDetail, problemLocation, type AgentFileProblem } from '../agent-file.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { hint, printJson, problem, say } from '../output.js';
import { loadScenarioFile, type LoadedScenarioFile } from '../agent-test/scenario-file.js';
import { runScenarioFile, type FileRun } from '../agent-test/run.js';
import { fileHeading, jsonReport, junitInputErrorXml, junitXml, scenarioLines, totalsLine, totalsOf } from '../agent-test/report.js';

/** Flags of `vagent agent test`. */
export interface AgentTestFlags {
  /** `--junit FILE`: where the JUnit XML report is written. */
  junit?: string;
  /** `--update`: record what passing scenarios produced as expectations of turns that have none. */
  update?: boolean;
}

/**
 * Bad input of `agent test` (exit 2, `bad_arguments`): `summary` ("1 of 3 scenario files have
 * problems: nothing was run") and each problem as a `FILE:LINE:COL: field: message` line.
 */
class ScenarioInputError extends CliError {
  constructor(
    message: string,
    readonly summary: string,
    readonly problems: string[],
    hint?: string,
  ) {
    super(message, EXIT.usage, hint);
    this.name = 'ScenarioInputError';
  }
}

/**
 * Loads every scenario file `paths` name; prints each problem on stderr and throws when there
 * is any. With `json` nothing is printed: the problems are part of the error's message, so the
 * error is one JSON line on stderr (README.md "Exit codes").
 * @throws ScenarioInputError exit 2
 */
function loadAll(paths: string[], json: boolean): LoadedScenarioFile[] {
  const { files, problems } = expandAgentPaths(paths);
  const all: AgentFileProblem[] = [...problems];
  const loaded: LoadedScenarioFile[] = [];
  for (const file of files) {
    const r = loadScenarioFile(file);
    if (!r.ok) {
      all.push(...r.problems);
      continue;
    }
    // A turn given only as audio needs the call's media path, which a text run does not go through.
    const audioOnly = r.scenarios.scenarios.flatMap((s, i) =>
      s.turns.flatMap((t, j) =>
        t.caller === undefined
          ? [
              r.problemAt(
                ['scenarios', i, 'turns', j, 'audio'],
                'a turn given only as audio cannot run as text: add caller: with its words',
              ),
            ]
          : [],
      ),
    );
    if (audioOnly.length > 0) all.push(...audioOnly);
    else loaded.push(r);
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
    );
  }
  return loaded;
}

/** Writes `text` to `file` through a temp file beside it, so a reader never sees half a report. @throws CliError exit 2 */
function writeFileWhole(file: string, text: string, what: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw new CliError(`cannot write the ${what} ${file}: ${(err as Error).message}`, EXIT.usage);
  }
}

/**
 * `vagent agent test FILE|DIR … [--junit FILE] [--update]`.
 * @throws CliError exit 2 for bad input (nothing run); CliError exit 1 (code
 *   `test_failed`) when a scenario failed
 */
export async function test(ctx: CommandContext, paths: string[], flags: AgentTestFlags): Promise<void> {
  let loaded: LoadedScenarioFile[];
  try {
    loaded = loadAll(paths, ctx.json);
  } catch (err) {
    // The report is written whatever the result (docs/agent-tests.md): bad input is one failed test case.
    if (flags.junit && err instanceof ScenarioInputError) {
      try {
        writeFileWhole(flags.junit, junitInputErrorXml(err.summary, err.problems), 'JUnit report');
      } catch {
        // the bad input is the error to report; a report that cannot be written is secondary
      }
    }
    throw err;
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
      const open = (): ScenarioHost => (host = openScenarioHost());
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
  if (flags.junit) writeFileWhole(flags.junit, junitXml(runs), 'JUnit report');
  const totals = totalsOf(runs);
  if (ctx.json) printJson(jsonReport(runs));
  else say(totalsLine(totals));
  if (flags.update) {
    const { updateFile } = await import('../agent-test/update.js');
    for (const [i, file] of loaded.entries()) {
      const outcome = updateFile(file, runs[i]!);
      if (outcome.text !== null) writeFileWhole(file.file, outcome.text, 'scenario file');
      if (!ctx.json) hint(outcome.message);
    }
  }
  if (flags.junit && !ctx.json) hint(`JUnit report written to ${flags.junit}`);
  if (totals.failed > 0) {
    throw new CliError(`${totals.failed} of ${totals.scenarios} scenarios failed`, EXIT.error, undefined, 'test_failed');
  }
}

/**
 * `vagent agent test --voice` (docs/agent-tests.md "Voice"): each scenario file gets an
 * ephemeral daemon of its own (src/daemon/voice-host.ts) holding its agent, and each scenario
 * is said on a simulated call to it (./voice.ts).
 */
import type { ScenarioHostOptions } from '../../daemon/scenario-host.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { say } from '../output.js';
import { fileHeading, scenarioLines } from './report.js';
import type { FileRun, ScenarioRun } from './run.js';
import type { LoadedScenarioFile } from './scenario-file.js';
import { openCallerVoice, runVoiceScenario, type CallerVoice } from './voice.js';

/**
 * Runs every scenario of `loaded` on the phone, file by file, printing each as it ends (not with `--json`).
 * @throws CliError (exit 1) when the embedded voice is missing, or no recogniser hears an agent's language
 */
export async function runVoice(ctx: CommandContext, loaded: LoadedScenarioFile[], options: ScenarioHostOptions): Promise<FileRun[]> {
  const { openVoiceHost } = await import('../../daemon/voice-host.js');
  let voice: CallerVoice;
  try {
    voice = await openCallerVoice();
  } catch (err) {
    throw new CliError(
      `--voice cannot speak the caller's lines: ${(err as Error).message}`,
      EXIT.error,
      'install vagent with its optional dependencies',
    );
  }
  const runs: FileRun[] = [];
  let open: { close(): Promise<void> } | null = null;
  // Ctrl-C: the daemon stops and its temp state dir is removed, then the signal ends the process.
  const onInterrupt = (): void => {
    void (open?.close() ?? Promise.resolve()).finally(() => process.kill(process.pid, 'SIGINT'));
  };
  process.once('SIGINT', onInterrupt);
  try {
    for (const file of loaded) {
      if (!ctx.json) say(fileHeading({ file: file.file, agent_id: file.agent.id, agent_file: file.agent.file }));
      const host = await openVoiceHost(file.agent.id, file.agent.source, {
        ...(options.llm ? { llm: options.llm } : {}),
        ...(options.pricingFile ? { pricingFile: options.pricingFile } : {}),
      });
      open = host;
      try {
        const language = file.agent.agent.language;
        const health = (await (await fetch(`${host.url}/v1/health?language=${encodeURIComponent(language)}`)).json()) as {
          recognition?: { for_language?: { provider: string | null; reason?: string } };
        };
        const heard = health.recognition?.for_language;
        if (heard && heard.provider === null) {
          throw new CliError(
            `--voice: no recogniser hears ${language} (the language of ${file.agent.id}): ${heard.reason ?? 'speech recognition is off'}`,
            EXIT.error,
            'the embedded recogniser (pocketsphinx, English) must be installed: sudo apt-get install pocketsphinx pocketsphinx-en-us',
            'recognition_off',
          );
        }
        const scenarios: ScenarioRun[] = [];
        for (const scenario of file.scenarios.scenarios) {
          const run = await runVoiceScenario(host, voice, file, scenario, { direction: file.agent.agent.direction, language });
          if (!ctx.json) for (const line of scenarioLines(run)) say(line);
          scenarios.push(run);
        }
        runs.push({ file: file.file, agent_file: file.agent.file, agent_id: file.agent.id, scenarios });
      } finally {
        open = null;
        await host.close();
      }
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    await voice.close();
  }
  return runs;
}

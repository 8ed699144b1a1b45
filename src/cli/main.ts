/**
 * `vagent`: the operator's CLI and the daemon's entry point.
 *
 * This file builds the root program (global options, `completion`, `--version`) and is the only
 * place errors become exit codes; each command group is declared in src/cli/program/. Every action
 * imports its handler lazily so that `vagent trunk list` never loads fastify, SQLite or the table
 * renderer it does not use.
 */
import { Argument, Command, CommanderError, Option } from 'commander';
import { examples } from './command-kit.js';
import { EXIT, exitCodeOf } from './errors.js';
import { printableLines, printError } from './output.js';
import { unknownCommand } from './commands/suggest.js';
import { versionLine } from '../version.js';
import { registerDaemonCommands } from './program/daemon.js';
import { registerTrunkCommands } from './program/trunk.js';
import { registerWebhookCommands } from './program/webhook.js';
import { registerNumberCommands } from './program/number.js';
import { registerAgentCommands } from './program/agent.js';
import { registerSessionCommands } from './program/session.js';
import { registerCallCommands } from './program/call.js';
import { registerTelephonyCommands } from './program/telephony.js';
import { registerAdminCommands } from './program/admin.js';
import { registerEventsCommands } from './program/events.js';
import { registerDashboardCommand } from './program/dashboard.js';

/** Builds the commander program. */
export function buildProgram(): Command {
  const program = new Command('vagent')
    .description('Self-hosted voice agents: SIP trunks, phone numbers (DIDs), agent workflows and calls.')
    .addOption(new Option('-v, --version', 'print the version of vagent, Node.js and the commit, then exit'))
    .option('--url <url>', 'daemon address (default: $VAGENT_URL, the login profile, or http://127.0.0.1:8787)')
    .option('--api-key <key>', 'API key (default: $VAGENT_API_KEY or the key saved by `vagent login`)')
    .option('--json', 'print the API response object as JSON')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .addHelpText(
      'after',
      `
Quick start:
  $ vagent serve                                   # daemon on http://127.0.0.1:8787
  $ vagent admin key create --tenant default       # in another shell: prints an API key once
  $ vagent login --url http://127.0.0.1:8787       # paste the key (or pipe it with --api-key-stdin)
  $ vagent trunk add --address sip.example-carrier.in --number +912240001234 --username acme --password-stdin
  $ vagent number add +918047001234 --label "Bengaluru support"
  $ vagent number bind +918047001234 ag_clinic_booking
  $ vagent agent apply -f config/agents/
  $ vagent chat ag_clinic_booking
  $ vagent telephony check                         # LiveKit settings of the daemon
  $ vagent call place --agent ag_emi_reminder --to +919876543210 --dial --customer-name "Ravi Kumar" --context @ravi.json

Exit codes: 0 ok; 1 API or usage error: the message names the error code, and a value the
daemon would refuse (e.g. a number that is not E.164) is invalid_request, exit 1, whether vagent
or the daemon catches it; 2 bad arguments (unknown command or flag, a missing argument, flags
that need each other, a --url that is not an http(s) URL); 3 the daemon cannot be reached;
130 interrupted (Ctrl-C at a prompt).
With --json, errors are one JSON line on stderr: {"error": {"code", "message", "param"?}}.`,
    );

  registerDaemonCommands(program);
  registerTrunkCommands(program);
  registerNumberCommands(program);
  registerAgentCommands(program);
  registerSessionCommands(program);
  registerCallCommands(program);
  registerEventsCommands(program);
  registerDashboardCommand(program);
  registerTelephonyCommands(program);
  registerWebhookCommands(program);
  registerAdminCommands(program);

  examples(
    program
      .command('completion')
      .addArgument(new Argument('<shell>', 'the shell to complete in').choices(['bash', 'zsh', 'fish']))
      .description('print a shell completion script (commands, subcommands and options)'),
    'vagent completion bash > ~/.local/share/bash-completion/completions/vagent',
    'vagent completion zsh > "${fpath[1]}/_vagent"',
    'vagent completion fish > ~/.config/fish/completions/vagent.fish',
    'source <(vagent completion bash)     # this shell only',
  ).action(async (shell: 'bash' | 'zsh' | 'fish') => {
    const { completionScript } = await import('./completion.js');
    process.stdout.write(completionScript(program, shell));
  });

  // `-v`/`--version`: the commit is looked up only when asked for (it may run git).
  program.on('option:version', () => {
    const line = versionLine();
    process.stdout.write(`${line}\n`);
    throw new CommanderError(EXIT.ok, 'commander.version', line);
  });

  return program;
}

/**
 * True when `argv` asks for `--json` (before any `--`). Read from argv itself so that a
 * command line commander refuses still gets its error as JSON.
 */
function wantsJson(argv: string[]): boolean {
  const args = argv.slice(2);
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/**
 * Runs the CLI with `argv` and returns the exit code; the only place errors become exit codes.
 * With `--json`, an error is one JSON line on stderr (`{"error": {code, message, param?}}`).
 */
export async function main(argv: string[] = process.argv): Promise<number> {
  const json = wantsJson(argv);
  const program = buildProgram();
  forEachCommand(program, (cmd) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeErr: (s) => process.stderr.write(s),
      // With --json, commander's own error text is replaced by the JSON error printed below.
      // A value commander quotes (an unknown option, a bad choice) is bounded and its control
      // characters shown, as the CLI's own errors do.
      outputError: (s, write) => {
        if (!json) write(`${printableLines(s.trimEnd())}\n`);
      },
    });
    if (json) cmd.showHelpAfterError(false);
    // An unknown subcommand: a "Did you mean" only for a near miss (commands/suggest.ts).
    if (cmd.commands.length > 0) cmd.on('command:*', (operands: string[]) => unknownCommand(cmd, operands[0] ?? ''));
  });
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      if (json) printError(err, true);
      return exitCodeOf(err);
    }
    printError(err, json);
    return exitCodeOf(err);
  }
}

/** Calls `fn` on `cmd` and every subcommand below it (settings set after building are not inherited). */
function forEachCommand(cmd: Command, fn: (cmd: Command) => void): void {
  fn(cmd);
  for (const sub of cmd.commands) forEachCommand(sub, fn);
}

/**
 * How `vagent`'s commands are declared (src/cli/program/*.ts): each action loads its handler lazily
 * and gets the command's context; shared options and help blocks.
 */
import type { Command } from 'commander';
import { contextOf, type CommandContext } from './context.js';

type Handler = (ctx: CommandContext, ...args: never[]) => unknown;

/** Wraps a lazily loaded handler: builds the context and leaves errors to `main` (src/cli/main.ts). */
export function action<M>(load: () => Promise<M>, pick: (m: M) => Handler) {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const positional = args.slice(0, -2);
    const opts = cmd.opts();
    const handler = pick(await load()) as (ctx: CommandContext, ...rest: unknown[]) => unknown;
    await handler(contextOf(cmd), ...positional, opts);
  };
}

/** Commander's reducer for a repeatable option: each value appended to the list. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Appends an "Examples:" block to a command's help. */
export function examples(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}`);
}

/** `-y, --yes` of the delete commands, which otherwise ask on a terminal and refuse without one. */
export function yesOption(cmd: Command): Command {
  return cmd.option('-y, --yes', 'delete without asking (required when stdin is not a terminal)');
}

/** `--state-dir` and `--config` of the admin commands, which work on a state dir directly. */
export function adminOptions(cmd: Command): Command {
  return cmd
    .option('--state-dir <dir>', 'state directory (default: $VAGENT_STATE_DIR or ~/.local/share/vagent)')
    .option('--config <file>', 'settings file (YAML or JSON)');
}

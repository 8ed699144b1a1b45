/**
 * `vagent number …`: the phone number (DID) commands (add, list, bind, rm).
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { type Command } from 'commander';
import { action, examples, yesOption } from '../command-kit.js';

const numberCmd = () => import('../commands/number.js');

/** Declares the `number` command group on `program`. */
export function registerNumberCommands(program: Command): void {
  const number = program.command('number').description('phone numbers (DIDs) you hold with a carrier');
  number
    .command('add')
    .argument('<number>', 'E.164 number, e.g. +918047001234')
    .description('register a number (records it only: nothing is bought)')
    .option('--label <text>', 'a label for people')
    .option('--trunk <trunk-id>', 'the trunk the number arrives on')
    .option('--agent <agent-id>', 'the agent answering inbound calls (ag_…)')
    .addHelpText(
      'after',
      `
Examples:
  $ vagent number add +918047001234 --label "Bengaluru support" --trunk tk_…
  $ vagent number add +911140001234 --agent ag_clinic_booking`,
    )
    .action(action(numberCmd, (m) => m.add));
  examples(
    number.command('list').alias('ls').description('list numbers, sorted by number'),
    'vagent number list',
    "vagent number list --json | jq -r '.data[] | select(.agent_id == null) | .number'",
  ).action(action(numberCmd, (m) => m.list));
  number
    .command('bind')
    .argument('<number>', 'E.164 number')
    .argument('<agent-id>', 'agent id, e.g. ag_clinic_booking')
    .description('choose the agent that answers inbound calls on a number')
    .addHelpText(
      'after',
      '\nExamples:\n  $ vagent number bind +918047001234 ag_clinic_booking\n  $ vagent number bind +911140001234 ag_clinic_booking --json',
    )
    .action(action(numberCmd, (m) => m.bind));
  examples(
    yesOption(
      number
        .command('rm')
        .alias('remove')
        .argument('<number>', 'E.164 number')
        .description("delete a number's record and binding (the carrier's number is untouched)"),
    ),
    'vagent number rm +918047001234',
    'vagent number rm +918047001234 --yes --json',
  ).action(action(numberCmd, (m) => m.rm));
}

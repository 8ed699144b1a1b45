/**
 * `vagent agent …`: the agent workflow commands (apply, list, show, rm).
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { type Command } from 'commander';
import { action, collect, examples, yesOption } from '../command-kit.js';

const agentCmd = () => import('../commands/agent.js');

/** Declares the `agent` command group on `program`. */
export function registerAgentCommands(program: Command): void {
  const agent = program.command('agent').description('agent workflows: what an agent says, asks and captures (YAML or JSON files)');
  agent
    .command('apply')
    .description('create or update agents from workflow files (each is checked locally first)')
    .requiredOption('-f, --file <path>', 'a .yaml, .yml or .json file, or a directory of them (repeat for more)', collect)
    .option('--no-wait', "return without waiting for the agent's audio to be pre-synthesised")
    .option('--dry-run', 'check the files only; send nothing')
    .addHelpText(
      'after',
      `
A file with problems is not sent; each problem is printed as FILE:LINE:COL: field: message
(e.g. ag_clinic_booking.yaml:31:30: steps[2].capture.type: Invalid option …), and the exit
code is 1. config/agents/ holds four commented examples of the format (docs/agents.md).

Examples:
  $ vagent agent apply -f config/agents/ag_clinic_booking.yaml
  $ vagent agent apply -f config/agents/
  $ vagent agent apply -f agents/ --dry-run
  $ vagent agent apply -f ag_emi_reminder.yaml -f ag_delivery_confirmation.yaml --no-wait --json`,
    )
    .action(action(agentCmd, (m) => m.apply));
  examples(
    agent.command('list').alias('ls').description('list agents, sorted by id'),
    'vagent agent list',
    'vagent agent list --json | jq -r \'.data[] | select(.direction == "outbound") | .id\'',
  ).action(action(agentCmd, (m) => m.list));
  examples(
    agent
      .command('show')
      .argument('<agent-id>', 'ag_… id')
      .description('show an agent and its steps')
      .option('--yaml', 'print the stored definition as YAML (to edit and apply again)'),
    'vagent agent show ag_clinic_booking',
    'vagent agent show ag_clinic_booking --yaml > ag_clinic_booking.yaml',
    'vagent agent show ag_clinic_booking --json',
  ).action(action(agentCmd, (m) => m.show));
  examples(
    yesOption(
      agent
        .command('rm')
        .alias('remove')
        .argument('<agent-id>', 'ag_… id')
        .description('delete an agent (numbers bound to it keep their binding)'),
    ),
    'vagent agent rm ag_clinic_booking',
    'vagent agent rm ag_clinic_booking --yes',
  ).action(action(agentCmd, (m) => m.rm));
}

/**
 * `vagent agent …`: the agent workflow commands (apply, list, show, rm, test).
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { type Command } from 'commander';
import { action, collect, examples, yesOption } from '../command-kit.js';

const agentCmd = () => import('../commands/agent.js');
const agentTestCmd = () => import('../commands/agent-test.js');

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
  agent
    .command('test')
    .argument('<path...>', 'scenario files (.yaml, .yml, .json) or directories of them')
    .description("run conversation scenarios against agent files, through vagent's own session engine (no daemon needed)")
    .option('--junit <file>', 'also write a JUnit XML report there (for CI)')
    .option('--update', "record a passing run's replies, steps, slots and outcome as the expectations of turns that have none")
    .option(
      '--voice',
      "say the caller's lines on a simulated phone call (embedded voice or audio: WAV files), heard by the embedded recogniser",
    )
    .option('--no-llm', "call no language model: agents' llm blocks fall back to their rules")
    .option('--config <file>', 'settings file the llm settings are read from, as vagent serve (env VAGENT_CONFIG)')
    .addHelpText(
      'after',
      `
A scenario file names the agent file it tests (relative to itself, so an edit is tested before
it is applied) and lists conversations; each turn is what the caller says and, optionally, what
the reply must be (docs/agent-tests.md):

  # tests/clinic.test.yaml
  agent: ../ag_clinic_booking.yaml
  now: "2026-11-20T10:00:00+05:30"      # "today" for relative dates
  scenarios:
    - name: books an appointment
      turns:
        - caller: "Priya Sharma"
          expect: { reply_contains: "Priya Sharma", layer: capture }
        - caller: "yes"
          expect: { step: day, slots: { patient_name: Priya Sharma } }
        - caller: "what is the fee?"
          expect: { layer: faq, reply_contains: "five hundred rupees", step: day }
      expect: { outcome: abandoned }

Turn expectations: reply_contains (text or list, any case), reply_matches (regex), step (the
step after the reply; $closing past the last), layer (capture, confirm, faq, reprompt,
control:goodbye, …), llm_used, slots {name: value}, ended, max_cost_inr. Scenario
expectations: outcome (completed, partial, stopped, handoff, abandoned), slots, ended,
max_cost_inr. Set context/customer_name for agents that need them.

--voice says the caller's lines on a simulated phone call instead (the embedded voice, or a
turn's audio: WAV file, into a daemon the command runs on a loopback port, heard by the embedded
recogniser); a line heard otherwise fails its turn: turn 1: heard "…" for "…".

Agents with an llm block call the language model of the llm settings vagent serve reads
(--config FILE or VAGENT_CONFIG, VAGENT_LLM_BASE_URL, VAGENT_LLM_MODEL, VAGENT_LLM_API_KEY; the
first line says which model); --no-llm calls none (docs/llm.md).

One line per scenario: ✓, or ✗ with the first failed expectation (turn, expected, got).
Exit codes: 0 all passed; 1 a scenario failed; 2 bad input (a file that cannot be read, or a
problem in a scenario or agent file, printed as FILE:LINE:COL: field: message; nothing runs).

Examples:
  $ vagent agent test config/agents/tests/
  $ vagent agent test tests/clinic.test.yaml --junit reports/agents.xml
  $ vagent agent test tests/ --json | jq '.files[].scenarios[] | select(.passed | not) | .name'
  $ vagent agent test tests/new-flow.test.yaml --update    # record what a passing run said
  $ vagent agent test tests/clinic-voice.test.yaml --voice   # through the phone's media path
  $ VAGENT_LLM_BASE_URL=http://127.0.0.1:8790/v1 vagent agent test tests/   # with the fake model (npm run fake-llm)`,
    )
    .action(action(agentTestCmd, (m) => m.test));
}

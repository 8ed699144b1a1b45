/**
 * `vagent trunk …`: the SIP trunk commands (add, list, show, rm).
 *
 * Each action imports its handler lazily, so a command loads only the modules it uses.
 */
import { type Command } from 'commander';
import { action, collect, examples, yesOption } from '../command-kit.js';

const trunkCmd = () => import('../commands/trunk.js');

/** Declares the `trunk` command group on `program`. */
export function registerTrunkCommands(program: Command): void {
  const trunk = program.command('trunk').description('SIP trunks: your carrier connections');
  trunk
    .command('add')
    .description('register a SIP trunk')
    .requiredOption('--address <host>', 'carrier SIP host, optionally with :port (e.g. sip.example-carrier.in)')
    .option('--name <name>', 'a name for people')
    .option('--number <e164>', 'caller-ID number the trunk may present (repeat for more)', collect)
    .option('--provider-trunk-id <id>', 'trunk already registered with the telephony provider (LiveKit ST_…)')
    .option('--username <user>', 'SIP digest username; the password is read from stdin or a hidden prompt')
    .option('--password-stdin', 'read the SIP password from stdin (never pass it as an argument)')
    .addHelpText(
      'after',
      `
Examples:
  $ vagent trunk add --address sip.example-carrier.in --name "Mumbai PRI" --number +912240001234 --number +912240001235
  $ printf %s "$SIP_PASSWORD" | vagent trunk add --address 203.0.113.10:5060 --username acme --password-stdin
  $ vagent trunk add --address sip.example-carrier.in --provider-trunk-id ST_a1b2c3d4`,
    )
    .action(action(trunkCmd, (m) => m.add));
  examples(
    trunk.command('list').alias('ls').description('list trunks, oldest first'),
    'vagent trunk list',
    'vagent trunk list --json | jq -r \'.data[] | select(.address == "sip.example-carrier.in") | .id\'',
  ).action(action(trunkCmd, (m) => m.list));
  examples(
    trunk.command('show').argument('<trunk-id>', 'tk_… id').description('show one trunk'),
    'vagent trunk show tk_3x7kq2m4n5p6r7s8t9va',
    'vagent trunk show tk_3x7kq2m4n5p6r7s8t9va --json',
  ).action(action(trunkCmd, (m) => m.show));
  examples(
    yesOption(
      trunk
        .command('rm')
        .alias('remove')
        .argument('<trunk-id>', 'tk_… id')
        .description(
          'delete a trunk; the numbers on it, named first, keep their record without a trunk (a trunk added again does not re-attach them)',
        ),
    ),
    'vagent trunk rm tk_3x7kq2m4n5p6r7s8t9va',
    'vagent trunk rm tk_3x7kq2m4n5p6r7s8t9va --yes    # in a script: no question',
  ).action(action(trunkCmd, (m) => m.rm));
}

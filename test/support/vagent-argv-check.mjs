#!/usr/bin/env node
/**
 * A stand-in for `vagent` that only checks its command line against the CLI's own commander
 * definitions (dist/cli/main.js `buildProgram`) and runs nothing: an unknown command or flag, a
 * missing argument or required flag, or a value outside an option's choices exits 2 with
 * commander's message, as `vagent` would. Used by test/cli/docs-commands.test.ts for documented
 * commands that cannot run in a test (a daemon of their own, an outside service).
 *
 * Each command line checked is appended to $VAGENT_ARGV_LOG as one JSON line, {argv, ok, error?}.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { buildProgram } = await import(path.join(ROOT, 'dist', 'cli', 'main.js'));

const program = buildProgram();
const each = (cmd, fn) => {
  fn(cmd);
  for (const sub of cmd.commands) each(sub, fn);
};
each(program, (cmd) => {
  cmd.exitOverride();
  cmd.configureOutput({ writeOut: () => {}, writeErr: () => {} });
  // Keep each command's arguments and options; replace what it does with nothing.
  if (cmd._actionHandler) cmd.action(() => {});
});
program.removeAllListeners('option:version');

const argv = process.argv.slice(2);
let error;
try {
  await program.parseAsync(argv, { from: 'user' });
} catch (err) {
  if (!['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(err.code)) error = err.message;
}
if (process.env.VAGENT_ARGV_LOG) {
  fs.appendFileSync(process.env.VAGENT_ARGV_LOG, `${JSON.stringify({ argv, ok: error === undefined, ...(error ? { error } : {}) })}\n`);
}
if (error) {
  process.stderr.write(`${error}\n`);
  process.exit(2);
}

/**
 * Files the CLI writes where the operator said (`call recording -o FILE`, `agent test --junit
 * FILE`): the place is checked before any work is done, so a typo in a directory is told at once
 * in the operator's terms rather than as a raw `ENOENT` after a download or a whole test run, and
 * the file is written whole through a temp file beside it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CliError, EXIT, UsageError } from './errors.js';
import { printable } from './output.js';

/**
 * Checks that `file` can be written: its directory exists, is a directory and may be written
 * in, and `file` itself is not a directory.
 * @param what what is written, for the message (`the recording`, `the JUnit report`)
 * @throws UsageError (exit 2) `cannot write FILE: the directory DIR does not exist` and the like
 */
export function checkWritable(file: string, what: string): void {
  const dir = path.dirname(path.resolve(file));
  const fail = (why: string): never => {
    throw new UsageError(`cannot write ${what} ${printable(file)}: ${why}`);
  };
  let dirStat: fs.Stats;
  try {
    dirStat = fs.statSync(dir);
  } catch {
    return fail(`the directory ${printable(dir)} does not exist`);
  }
  if (!dirStat.isDirectory()) fail(`${printable(dir)} is not a directory`);
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    fail(`no permission to write in ${printable(dir)}`);
  }
  let fileStat: fs.Stats | undefined;
  try {
    fileStat = fs.statSync(file);
  } catch {
    fileStat = undefined;
  }
  if (fileStat?.isDirectory()) fail('it is a directory');
}

/**
 * Writes `data` to `file` through a temp file beside it (`.NAME.PID.tmp`, then renamed), so a
 * reader never sees half a file; the temp file is removed when the write fails.
 * @param mode the new file's permission bits (e.g. 0o600 for a recording of a call)
 * @throws CliError (exit 2) naming `file`, never the temp file
 */
export function writeFileWhole(file: string, data: string | Uint8Array, what: string, mode?: number): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(tmp, data, mode === undefined ? {} : { mode });
    if (mode !== undefined) fs.chmodSync(tmp, mode);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`cannot write ${what} ${printable(file)}: ${code ?? (err as Error).message}`, EXIT.usage);
  }
}

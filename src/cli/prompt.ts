/**
 * Reading from the operator without putting anything in argv: secrets from piped stdin or a
 * hidden prompt on a TTY, and the yes/no question before a delete.
 */
import { CliError, EXIT, CancelledError, UsageError } from './errors.js';

/** Reads all of stdin and strips one trailing newline. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Prompts on the terminal without echoing what is typed.
 * @throws UsageError when stdin is not a terminal (the caller should have used a `--…-stdin` flag);
 *   CancelledError (exit 130) on Ctrl-C or Ctrl-D before an answer: nothing is saved or sent.
 */
export async function promptHidden(question: string, flagHint: string): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError(`stdin is not a terminal; pipe the secret in with ${flagHint}`);
  const readline = await import('node:readline');
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const out = rl as unknown as { _writeToOutput: (s: string) => void; output: NodeJS.WritableStream };
  let prompted = false;
  out._writeToOutput = (s: string) => {
    if (!prompted) {
      process.stderr.write(s);
      prompted = true;
    }
  };
  try {
    // In raw mode Ctrl-C reaches readline as a key, not as a signal: without a listener the
    // question would just pause, the event loop empty out and the process exit 0 unasked.
    return await new Promise<string>((resolve, reject) => {
      let answered = false;
      rl.once('SIGINT', () => reject(new CancelledError()));
      rl.once('close', () => {
        if (!answered) reject(new CancelledError());
      });
      rl.question(question, (answer) => {
        answered = true;
        resolve(answer);
      });
    });
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}

/** Flags of the `rm` commands. */
export interface DeleteFlags {
  /** `--yes`: delete without asking. */
  yes?: boolean;
}

/** The streams {@link confirmDelete} asks on: the process's own by default. */
export interface PromptStreams {
  /** Where the answer is read; asked only when `isTTY` is true. */
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Where the question is written (stderr, so stdout stays clean for pipes). */
  output: NodeJS.WritableStream;
}

/**
 * Asks before a delete (`trunk rm`, `number rm`, `agent rm`): on a terminal the
 * question `Delete trunk tk_…? [y/N] ` is put on stderr and only `y`/`yes` goes on; `--yes`
 * skips the question. Without a terminal nobody can answer, so `--yes` is required.
 * @param what the thing deleted, for people: `trunk tk_…`, `number +91…`, `agent ag_…`
 * @param yes `--yes` was given
 * @throws UsageError (exit 2) when stdin is not a terminal and `--yes` was not given;
 *   CliError `cancelled` (exit 1) when the answer is not yes. Nothing is deleted then.
 */
export async function confirmDelete(
  what: string,
  yes: boolean | undefined,
  streams: PromptStreams = { input: process.stdin, output: process.stderr },
): Promise<void> {
  if (yes) return;
  if (streams.input.isTTY !== true) {
    throw new UsageError(`not deleting ${what}: stdin is not a terminal, so nobody can confirm; add --yes to delete without asking`);
  }
  const readline = await import('node:readline');
  const rl = readline.createInterface({ input: streams.input, output: streams.output, terminal: false });
  let answer: string;
  try {
    answer = await new Promise<string>((resolve) => {
      rl.once('close', () => resolve(''));
      rl.question(`Delete ${what}? [y/N] `, resolve);
    });
  } finally {
    rl.close();
  }
  if (!/^\s*y(es)?\s*$/i.test(answer)) throw new CliError(`${what} not deleted`, EXIT.error, undefined, 'cancelled');
}

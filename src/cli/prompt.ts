/**
 * Reading secrets without putting them in argv: from piped stdin, or a hidden prompt on a TTY.
 */
import { UsageError } from './errors.js';

/** Reads all of stdin and strips one trailing newline. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * Prompts on the terminal without echoing what is typed.
 * @throws UsageError when stdin is not a terminal (the caller should have used a `--…-stdin` flag).
 */
export async function promptHidden(question: string, flagHint: string): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError(`stdin is not a terminal; pipe the secret in with ${flagHint}`);
  const readline = await import('node:readline');
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const out = rl as unknown as { _writeToOutput: (s: string) => void; output: NodeJS.WritableStream };
  let prompted = false;
  out._writeToOutput = (s: string) => {
    if (!prompted) { process.stderr.write(s); prompted = true; }
  };
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}

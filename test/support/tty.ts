/**
 * Running the built CLI on a pseudo-terminal, for what only happens on one: hidden prompts,
 * delete questions, Ctrl-C typed at a prompt. util-linux `script` allocates the terminal
 * (`script -qec CMD /dev/null`: quiet, the command's exit code as its own, no typescript file).
 */
import { spawn } from 'node:child_process';
import { BIN, childEnv, cliHome, ROOT, type CliHome, type CliResult } from './daemon.js';

/** A word for a POSIX shell, in single quotes. */
const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/** Options of {@link runCliOnTty}. */
export interface TtyRunOptions {
  env?: Record<string, string | undefined>;
  home?: CliHome;
  /** What is typed once the terminal shows `prompt`: e.g. `'\u0003'` for Ctrl-C, `'n\r'`. */
  keys: string;
  /** Typed once the output matches this. */
  prompt: RegExp;
  /** Kill after this long (default 20 s): the result's code is then null. */
  timeoutMs?: number;
}

/**
 * Runs `node bin/vagent …args` with a terminal as its stdin and stdout, types `keys` when the
 * output shows `prompt` (colours off: NO_COLOR), and returns the exit code and everything the terminal showed (as
 * `stdout`; a terminal has one stream).
 */
export function runCliOnTty(args: string[], opts: TtyRunOptions): Promise<CliResult> {
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: ROOT,
      env: childEnv(opts.home ?? cliHome(), { NO_COLOR: '1', ...opts.env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let typed = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      if (!typed && opts.prompt.test(out)) {
        typed = true;
        child.stdin.write(opts.keys);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      out += s;
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: out, stderr: '' });
    });
  });
}

/**
 * The development fakes' command lines (`npm run fake-llm`, `fake-sarvam`, `fake-elevenlabs`:
 * dist/devtools/<name>-main.js) started as a new user starts them: what they print is kept, the
 * `export NAME=value` lines they print once listening are read, and every one still running is
 * stopped by {@link stopFakeClis} (call it in an `afterEach`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT, requireBuild } from './daemon.js';

/** A fake's process. */
export interface FakeCli {
  child: ChildProcess;
  /** What it printed on stdout so far. */
  stdout(): string;
  /** What it printed on stderr so far. */
  stderr(): string;
  /**
   * Its `export NAME=value` lines, once each of `names` was printed.
   * @throws Error holding what it printed, when it exits first
   */
  exports(names: readonly string[]): Promise<Record<string, string>>;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Sends SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** The `export NAME=value` lines of `text`. */
function exportLines(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/**
 * Starts dist/devtools/`name`-main.js with `args` under this Node.js.
 * @param name `fake-llm`, `fake-sarvam`, `fake-elevenlabs`, …
 */
export function startFakeCli(name: string, args: readonly string[]): FakeCli {
  requireBuild();
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'devtools', `${name}-main.js`), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const exports = (names: readonly string[]) =>
    new Promise<Record<string, string>>((resolve, reject) => {
      const check = () => {
        const vars = exportLines(out);
        if (names.every((n) => vars[n] !== undefined)) {
          child.stdout!.off('data', check);
          resolve(vars);
        }
      };
      child.stdout!.on('data', check);
      check();
      void exited.then((code) => reject(new Error(`${name} exited with ${code}: ${out}${err}`)));
    });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exports,
    exited,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Sends SIGTERM to every fake started by {@link startFakeCli} that is still running. */
export function stopFakeClis(): void {
  for (const child of running) child.kill('SIGTERM');
  running.clear();
}

/**
 * Child processes and temp dirs of a bench run. Servers always run in their own process (never
 * in the bench process, so autocannon and the server do not share a thread): start one, wait
 * for the `listening on http://host:<port>` line it prints, keep the tail of its output for
 * error messages, read its peak RSS (VmHWM from /proc/<pid>/status), and stop it. Everything
 * started or created here is registered and torn down by {@link cleanup}, and, as a last
 * resort, synchronously on process exit (SIGKILL + rm -rf), so an error or Ctrl-C leaves
 * nothing behind.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const children = new Set();
const tempDirs = new Set();
const TAIL_LINES = 40;

/** A fresh temp dir (mkdtemp under os.tmpdir()), removed by cleanup(). */
export function makeTempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

function keepTail(stream, sink) {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      sink.count += 1;
      sink.lines.push(line);
      if (sink.lines.length > TAIL_LINES) sink.lines.shift();
      sink.onLine?.(line);
    }
  });
}

/**
 * Spawns `node <args>` and resolves once it printed its listening URL on `stream`.
 * @returns {Promise<{name, child, pid, port, url, banner, out, err, stop}>}
 */
export function startServer({ name, args, env = process.env, cwd, stream = 'stdout', timeoutMs = 20_000 }) {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const out = { count: 0, lines: [] };
  const err = { count: 0, lines: [] };
  keepTail(child.stdout, out);
  keepTail(child.stderr, err);
  const describe = () => `--- ${name} stdout (tail) ---\n${out.lines.join('\n')}\n--- ${name} stderr (tail) ---\n${err.lines.join('\n')}`;

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not report a listening port within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code, signal) => fail(new Error(`${name} exited (code ${code}, signal ${signal}) before listening`));
    function fail(error) {
      clearTimeout(timer);
      child.off('exit', onExit);
      child.kill('SIGKILL');
      error.message += `\n${describe()}`;
      reject(error);
    }
    child.once('exit', onExit);
    child.once('error', fail);
    (stream === 'stdout' ? out : err).onLine = (line) => {
      const m = /listening on (http:\/\/[^\s:]+:(\d+))/.exec(line);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve({
        name,
        child,
        pid: child.pid,
        url: m[1],
        port: Number(m[2]),
        banner: line,
        out,
        err,
        describe,
        stop: () => stopChild(child),
      });
    };
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code once the child is gone. */
export function stopChild(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

/** Peak resident set size of a live process in MiB (Linux /proc VmHWM), or null. */
export function peakRssMiB(pid) {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Stops every child still running (gracefully) and removes every temp dir. */
export async function cleanup() {
  await Promise.all([...children].map((c) => stopChild(c)));
  cleanupSync();
}

/** Last resort (process 'exit', signals): SIGKILL children and rm -rf temp dirs, synchronously. */
export function cleanupSync() {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
  children.clear();
  for (const d of tempDirs) {
    try {
      fs.rmSync(d, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
  tempDirs.clear();
}

process.once('exit', cleanupSync);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping children and removing temp dirs\n`);
    cleanupSync();
    process.exit(130);
  });
}

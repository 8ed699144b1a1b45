/**
 * The state directory: creation with mode 0700, the daemon lock file, the master key and the
 * audio key.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { statePaths } from '../config/paths.js';

/** Thrown when the state dir cannot be used (bad mode, held by another daemon, bad key). */
export class StateDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateDirError';
  }
}

/** Creates the state dir (0700) if missing and tightens its mode. */
export function ensureStateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.statSync(dir);
  if (!st.isDirectory()) throw new StateDirError(`${dir} is not a directory`);
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A held daemon lock; release it on shutdown. */
export interface DaemonLock {
  release(): void;
}

/**
 * Takes the state dir's daemon lock (`daemon.lock`, holding the owner's pid).
 * A lock whose process is gone (crash, `kill -9`) is taken over.
 *
 * @throws StateDirError when a live process holds the lock.
 */
export function acquireDaemonLock(dir: string): DaemonLock {
  const file = statePaths(dir).lock;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      return {
        release() {
          try {
            if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder = NaN;
      try {
        holder = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
      } catch {
        /* vanished */
      }
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && pidAlive(holder)) {
        throw new StateDirError(
          `another vagent daemon (pid ${holder}) is already serving state dir ${dir}; ` +
            `stop it first, or give this one its own --state-dir`,
        );
      }
      try {
        fs.unlinkSync(file);
      } catch {
        /* raced with another starter */
      }
    }
  }
  throw new StateDirError(`could not take the lock ${file}; another vagent is starting on the same state dir`);
}

function decodeKey(text: string, source: string): Buffer {
  const t = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(t)) key = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) key = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
  if (!key || key.length !== 32) {
    throw new StateDirError(`${source} must be 32 bytes, as 64 hex characters or base64 (try: openssl rand -base64 32)`);
  }
  return key;
}

/**
 * A 32-byte secret kept in a file of the state dir: created on first use (32 random bytes,
 * base64, mode 0600, written with `O_EXCL` so two starters never write two different keys),
 * then read back. The master key and the audio key (docs/api-decisions.md "Master key", "Audio URLs") both live this way.
 *
 * @param file the key file, e.g. `<state-dir>/master.key`
 * @returns the 32 key bytes
 * @throws StateDirError for a file readable or writable by group or others (with a chmod
 *         hint), or one that does not hold 32 bytes as hex or base64
 */
export function loadKeyFile(file: string): Buffer {
  try {
    const fd = fs.openSync(file, 'wx', 0o600);
    fs.writeSync(fd, crypto.randomBytes(32).toString('base64') + '\n');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = fs.statSync(file);
  if ((st.mode & 0o077) !== 0) {
    throw new StateDirError(`${file} has mode ${(st.mode & 0o777).toString(8)}; it must be readable by its owner only (chmod 600 ${file})`);
  }
  return decodeKey(fs.readFileSync(file, 'utf8'), file);
}

/**
 * The 32-byte master key that seals trunk credentials (docs/api-decisions.md "Master key").

 * `configured` (from `VAGENT_MASTER_KEY` or the config file) wins; otherwise
 * `<state-dir>/master.key`, created on first use with mode 0600 ({@link loadKeyFile}).
 *
 * @throws StateDirError for a malformed key, or a key file readable by group or others.
 */
export function loadMasterKey(dir: string, configured: string | undefined): Buffer {
  if (configured) return decodeKey(configured, 'VAGENT_MASTER_KEY');
  return loadKeyFile(statePaths(dir).masterKey);
}

/**
 * The 32-byte per-install secret that names audio clips (`GET /v1/audio/{name}.wav`, where
 * name = HMAC-SHA256 of the clip's content key under this secret; docs/api-decisions.md
 * "Audio"): `<state-dir>/audio.key`, created on first use with mode 0600
 * ({@link loadKeyFile}). Its own file rather than a derivation of the master key: the master
 * key may be supplied from outside (`VAGENT_MASTER_KEY`, possibly the same on several
 * installs), and deleting `audio.key` revokes every audio URL without touching credentials.
 *
 * @throws StateDirError for a malformed key file, or one readable by group or others.
 */
export function loadAudioKey(dir: string): Buffer {
  return loadKeyFile(statePaths(dir).audioKey);
}

/**
 * Every filesystem path vagent uses is built here, so none is spelt twice (docs/architecture.md "Settings").
 *
 * - state dir: `--state-dir` > `VAGENT_STATE_DIR` > `$XDG_DATA_HOME/vagent` > `~/.local/share/vagent`
 * - CLI profile dir: `$XDG_CONFIG_HOME/vagent` > `~/.config/vagent`
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed package's root (holds `config/`), from this module's place in `src/` or `dist/`. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Shipped files: the price list and the example agents. */
export const shippedPaths = {
  pricing: path.join(PACKAGE_ROOT, 'config', 'pricing.yaml'),
  agents: path.join(PACKAGE_ROOT, 'config', 'agents'),
};

/** The default state directory when neither a flag nor `VAGENT_STATE_DIR` names one. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(os.homedir(), '.local', 'share');
  return path.join(base, 'vagent');
}

/** Resolves the state dir from an explicit value (flag), the environment, or the default. */
export function resolveStateDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = flag ?? env.VAGENT_STATE_DIR;
  return path.resolve(chosen && chosen.length > 0 ? chosen : defaultStateDir(env));
}

/** Files inside a state dir. */
export function statePaths(stateDir: string) {
  return {
    dir: stateDir,
    database: path.join(stateDir, 'vagent.db'),
    lock: path.join(stateDir, 'daemon.lock'),
    masterKey: path.join(stateDir, 'master.key'),
    /** Where the daemon last listened, for local commands' hints (`daemon-address.ts`). */
    daemonAddress: path.join(stateDir, 'daemon.json'),
    /** The per-install secret that names audio clips (created 0600, see `loadAudioKey`). */
    audioKey: path.join(stateDir, 'audio.key'),
    audio: path.join(stateDir, 'audio'),
    /** Call recordings, `cl_<N>.wav` (docs/media.md "Recordings"). */
    recordings: path.join(stateDir, 'recordings'),
  };
}

/** The CLI's profile directory (`~/.config/vagent`), holding `config.json` and `credentials.json`. */
export function profileDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(base, 'vagent');
}

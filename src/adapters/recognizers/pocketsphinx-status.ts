/**
 * Whether the embedded recogniser ({@link ./pocketsphinx.ts}) can run here: Debian's
 * `pocketsphinx` binary and the `pocketsphinx-en-us` model, found by looking at files only.
 */
import fs from 'node:fs';
import path from 'node:path';

/** How to install the engine, for error messages and `/v1/health`. */
export const POCKETSPHINX_INSTALL_HINT = 'install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us';
/** Default engine binary (looked up on PATH). */
export const DEFAULT_POCKETSPHINX_BINARY = 'pocketsphinx_continuous';
/** Default model directory of Debian's `pocketsphinx-en-us`. */
export const DEFAULT_POCKETSPHINX_MODEL = '/usr/share/pocketsphinx/model/en-us';

/** Options of {@link pocketsphinxStatus} and of the recogniser (`PocketsphinxRecognizer`, pocketsphinx.ts). */
export interface PocketsphinxOptions {
  /** The `pocketsphinx_continuous` binary: a name looked up on PATH, or a path. Default {@link DEFAULT_POCKETSPHINX_BINARY}. */
  binary?: string;
  /** The model directory holding `en-us/` (acoustic model), `en-us.lm.bin`, `en-us-phone.lm.bin` and `cmudict-en-us.dict`. Default {@link DEFAULT_POCKETSPHINX_MODEL}. */
  model?: string;
}

/** What {@link pocketsphinxStatus} found. */
export interface PocketsphinxStatus {
  /** Whether the engine can run here. */
  available: boolean;
  /** Why not, with how to install it. */
  reason?: string;
  /** The binary's resolved path, when found. */
  binary?: string;
  /** The model directory, when complete. */
  model?: string;
  /** The Debian package version (e.g. `0.8+5prealpha+1-15`), when dpkg knows it. */
  version?: string;
}

/** Files the model directory must hold. */
const MODEL_FILES = [
  'en-us/mdef',
  'en-us/means',
  'en-us/variances',
  'en-us/transition_matrices',
  'en-us/sendump',
  'en-us/noisedict',
  'en-us/feat.params',
  'en-us.lm.bin',
  'en-us-phone.lm.bin',
  'cmudict-en-us.dict',
];

/**
 * Whether the embedded recogniser can run: the binary is on PATH (or at the given path) and
 * executable, and the model directory is complete. Fast: looks at files only, loads no model.
 * Never throws.
 */
export function pocketsphinxStatus(options: PocketsphinxOptions = {}): PocketsphinxStatus {
  const binary = resolveBinary(options.binary ?? DEFAULT_POCKETSPHINX_BINARY);
  const model = options.model ?? DEFAULT_POCKETSPHINX_MODEL;
  const version = debianVersion('pocketsphinx');
  if (!binary) {
    return {
      available: false,
      reason: `pocketsphinx is not installed (no ${options.binary ?? DEFAULT_POCKETSPHINX_BINARY} found); speech recognition is off; ${POCKETSPHINX_INSTALL_HINT}`,
      ...(version ? { version } : {}),
    };
  }
  const missing = MODEL_FILES.filter((f) => !isFile(path.join(model, f)));
  if (missing.length > 0) {
    return {
      available: false,
      binary,
      reason: `the pocketsphinx English model is missing (${path.join(model, missing[0]!)} not found); speech recognition is off; ${POCKETSPHINX_INSTALL_HINT}`,
      ...(version ? { version } : {}),
    };
  }
  return { available: true, binary, model, ...(version ? { version } : {}) };
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The executable `name` (a path, or a name looked up on PATH) resolved to its path; undefined when not found. */
export function resolveBinary(name: string): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, name));
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      if (fs.statSync(c).isFile()) return path.resolve(c);
    } catch {
      // next
    }
  }
  return undefined;
}

/** The installed version of a Debian package, from dpkg's status file; undefined when unknown. */
function debianVersion(pkg: string): string | undefined {
  try {
    const status = fs.readFileSync('/var/lib/dpkg/status', 'utf8');
    const start = status.indexOf(`Package: ${pkg}\n`);
    if (start < 0) return undefined;
    const end = status.indexOf('\n\n', start);
    const block = status.slice(start, end < 0 ? undefined : end);
    return /\nVersion: (\S+)/.exec(block)?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The CLI profile (docs/api-decisions.md "CLI client"): daemon URL and output preferences in a lowdb JSON file
 * (`~/.config/vagent/config.json`), the API key in the OS keychain through `@napi-rs/keyring`
 * when a keychain service answers, else in `credentials.json` with mode 0600.
 *
 * Address: `--url` > `VAGENT_URL` > profile > `http://127.0.0.1:8787`.
 * Key: `--api-key` > `VAGENT_API_KEY` > keychain/credentials file for that URL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { profileDir } from '../config/paths.js';
import type * as Keyring from '@napi-rs/keyring';
import { API_KEY_PATTERN, MALFORMED_API_KEY } from '../client/http.js';
import { UsageError } from './errors.js';
import { quoted } from './output.js';

/** The default daemon address. */
export const DEFAULT_URL = 'http://127.0.0.1:8787';
const KEYCHAIN_SERVICE = 'vagent';

/** What the profile file holds. */
export interface ProfileData {
  url?: string;
  /** Where the key for `url` was stored by `vagent login`. */
  key_store?: 'keychain' | 'file';
}

interface CredentialsFile {
  keys: Record<string, string>;
}

function files() {
  const dir = profileDir();
  return { dir, profile: path.join(dir, 'config.json'), credentials: path.join(dir, 'credentials.json') };
}

async function openProfile() {
  // Not lowdb's JSONFilePreset: under NODE_ENV=test it silently swaps the file for memory,
  // so `vagent login` would save nothing in such an environment.
  const [{ Low }, { JSONFile }] = await Promise.all([import('lowdb'), import('lowdb/node')]);
  const f = files();
  fs.mkdirSync(f.dir, { recursive: true, mode: 0o700 });
  const db = new Low<ProfileData>(new JSONFile<ProfileData>(f.profile), {});
  await db.read();
  return db;
}

/** Reads the profile; an absent file is an empty profile. */
export async function readProfile(): Promise<ProfileData> {
  if (!fs.existsSync(files().profile)) return {};
  return (await openProfile()).data;
}

type KeyringModule = typeof Keyring;

async function keychain(): Promise<KeyringModule | undefined> {
  try {
    return await import('@napi-rs/keyring');
  } catch {
    return undefined;
  }
}

function readCredentialsFile(): CredentialsFile {
  try {
    const parsed = JSON.parse(fs.readFileSync(files().credentials, 'utf8')) as CredentialsFile;
    return parsed && typeof parsed.keys === 'object' ? parsed : { keys: {} };
  } catch {
    return { keys: {} };
  }
}

function writeCredentialsFile(data: CredentialsFile): void {
  const f = files();
  fs.mkdirSync(f.dir, { recursive: true, mode: 0o700 });
  const tmp = `${f.credentials}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, f.credentials);
  fs.chmodSync(f.credentials, 0o600);
}

/**
 * Saves the daemon URL and its API key. Returns where the key went and the file path when
 * it went to the credentials file.
 */
export async function saveLogin(url: string, key: string): Promise<{ store: 'keychain' | 'file'; path?: string }> {
  let store: 'keychain' | 'file' = 'file';
  const kc = await keychain();
  if (kc) {
    try {
      new kc.Entry(KEYCHAIN_SERVICE, url).setPassword(key);
      store = 'keychain';
    } catch {
      store = 'file';
    }
  }
  if (store === 'file') {
    const creds = readCredentialsFile();
    creds.keys[url] = key;
    writeCredentialsFile(creds);
  }
  const db = await openProfile();
  await db.update((d) => {
    d.url = url;
    d.key_store = store;
  });
  return store === 'file' ? { store, path: files().credentials } : { store };
}

/** Forgets the stored key for `url` (keychain and file). Returns true when one was removed. */
export async function forgetLogin(url: string): Promise<boolean> {
  let removed = false;
  const kc = await keychain();
  if (kc) {
    try {
      removed = new kc.Entry(KEYCHAIN_SERVICE, url).deletePassword() || removed;
    } catch {
      /* no keychain */
    }
  }
  const creds = readCredentialsFile();
  if (creds.keys[url] !== undefined) {
    delete creds.keys[url];
    writeCredentialsFile(creds);
    removed = true;
  }
  return removed;
}

/** The stored key for `url`, from where `vagent login` put it. */
export async function storedKey(url: string, profile: ProfileData): Promise<string | undefined> {
  if (profile.key_store === 'keychain') {
    const kc = await keychain();
    try {
      const k = kc ? new kc.Entry(KEYCHAIN_SERVICE, url).getPassword() : undefined;
      if (k) return k;
    } catch {
      /* fall through to the file */
    }
  }
  return readCredentialsFile().keys[url];
}

/** Global connection flags of every API command. */
export interface ConnectionFlags {
  url?: string;
  apiKey?: string;
}

/** Where the daemon address came from, for error messages. */
export type UrlSource = '--url' | 'VAGENT_URL' | 'the login profile' | 'the default';

function urlFrom(flags: ConnectionFlags, profile: ProfileData): { url: string; source: UrlSource } {
  const [raw, source]: [string, UrlSource] =
    flags.url !== undefined
      ? [flags.url, '--url']
      : process.env.VAGENT_URL
        ? [process.env.VAGENT_URL, 'VAGENT_URL']
        : profile.url !== undefined
          ? [profile.url, 'the login profile']
          : [DEFAULT_URL, 'the default'];
  return { url: checkDaemonUrl(raw, source).replace(/\/+$/, ''), source };
}

/**
 * Checks that a daemon address is an absolute http(s) URL with a host (WHATWG URL parsing,
 * as `fetch` does), so that `--url 127.0.0.1:8787` is reported as the address it is not
 * rather than as a missing key or an unreachable daemon.
 * @returns `raw` unchanged
 * @throws UsageError (exit 2) naming the address, where it came from and the form it needs
 */
export function checkDaemonUrl(raw: string, source: UrlSource): string {
  let parsed: URL | null;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = null;
  }
  const from = source === '--url' ? '--url' : `the daemon address from ${source}`;
  if (parsed === null || !['http:', 'https:'].includes(parsed.protocol) || parsed.host === '') {
    const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw)
      ? 'it must start with http:// or https://'
      : 'it has no http:// or https:// in front';
    throw new UsageError(
      `${from} ${quoted(raw)} is not a daemon URL: ${scheme}`,
      `for example --url http://${/^[\w.-]+:\d+$/.test(raw) ? raw : '127.0.0.1:8787'}`,
    );
  }
  return raw;
}

/** Resolves the daemon URL by the precedence above (the profile is read only when needed). @throws UsageError for an address that is not an http(s) URL. */
export async function resolveUrl(flags: ConnectionFlags): Promise<string> {
  return urlFrom(flags, (flags.url ?? process.env.VAGENT_URL) ? {} : await readProfile()).url;
}

/** Where an API key came from, for error messages. */
export type KeySource = '--api-key' | 'VAGENT_API_KEY' | 'stdin' | 'the prompt' | 'the login profile';

/**
 * Checks an API key wherever it enters (a flag, the environment, stdin, the saved login) before
 * anything is sent: one line of printable characters ({@link API_KEY_PATTERN}), and not JSON. The error names
 * where the key came from and never quotes it.
 * @returns `key` unchanged
 * @throws UsageError (exit 2) for a malformed key; for JSON on stdin the hint says how to take
 *   the key out of it (`vagent admin key create --json` prints `{"key": …}`)
 */
export function checkApiKey(key: string, source: KeySource): string {
  // JSON (`vagent admin key create --json`, compact or not) is never a key, though compact JSON
  // is printable.
  const json = /^\s*[{["]/.test(key);
  if (API_KEY_PATTERN.test(key) && !json) return key;
  const hint = json
    ? 'got JSON: pass the key itself, e.g. `vagent admin key create --json | jq -r .key | vagent login --api-key-stdin`'
    : source === 'the login profile'
      ? 'log in again: vagent login --url URL'
      : 'give the whole key on one line, as `vagent admin key create` printed it';
  throw new UsageError(MALFORMED_API_KEY.replace('the API key', `the API key from ${source}`), hint);
}

/**
 * Resolves the daemon URL and key by the precedence above.
 * @throws UsageError for an address that is not an http(s) URL, or a malformed key ({@link checkApiKey}).
 */
export async function resolveConnection(flags: ConnectionFlags): Promise<{ url: string; apiKey: string | undefined }> {
  const [givenKey, source]: [string | undefined, KeySource] =
    flags.apiKey !== undefined ? [flags.apiKey, '--api-key'] : [process.env.VAGENT_API_KEY, 'VAGENT_API_KEY'];
  if (givenKey) return { url: await resolveUrl(flags), apiKey: checkApiKey(givenKey, source) };
  const profile = await readProfile();
  const { url } = urlFrom(flags, profile);
  const stored = await storedKey(url, profile);
  return { url, apiKey: stored ? checkApiKey(stored, 'the login profile') : stored };
}

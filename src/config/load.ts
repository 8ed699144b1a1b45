/**
 * Loads and validates settings: defaults < file < env < flags (docs/architecture.md "Settings").
 */
import fs from 'node:fs';
import YAML from 'yaml';
import type { z } from 'zod';
import { SettingsSchema, type Settings } from './schema.js';
import { resolveStateDir } from './paths.js';
import { ENV_KEYS, LIVEKIT_ENV, LLM_ENV, RECOGNIZER_ENV } from './env-names.js';

/** Thrown when a setting is missing or invalid; the message names each bad setting and its source. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Settings named by command-line flags (all optional). */
export interface SettingsFlags {
  host?: string;
  port?: string | number;
  stateDir?: string;
  config?: string;
}

/** The blocks whose fields come from environment variables of their own, as LiveKit's. */
const BLOCK_ENV: Record<string, Record<string, string>> = { ...RECOGNIZER_ENV, llm: LLM_ENV };

/**
 * `VAGENT_RECOGNIZERS`: `range=provider` pairs separated by commas (`hi=sarvam,en-IN=deepgram`).
 * A pair without `=` is kept as given, so the schema names it.
 */
function parseRecognizersEnv(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const i = pair.indexOf('=');
    if (i < 0) out[pair] = '';
    else out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid YAML: ${(err as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${file} must hold a mapping of settings`);
  }
  return parsed as Record<string, unknown>;
}

function sourceOf(key: string, fromEnv: Set<string>, fromFlags: Set<string>, file?: string): string {
  if (fromFlags.has(key)) return 'flag';
  if (key === 'livekit') {
    const names = Object.entries(LIVEKIT_ENV)
      .filter(([, k]) => fromEnv.has(`livekit.${k}`))
      .map(([n]) => n);
    if (names.length > 0) return `environment ${names.join(', ')}${file ? ` and config file ${file}` : ''}`;
  }
  for (const [block, names] of Object.entries(BLOCK_ENV)) {
    if (key !== block && !key.startsWith(`${block}.`)) continue;
    const used = Object.entries(names)
      .filter(([, k]) => fromEnv.has(`${block}.${k}`) && (key === block || key === `${block}.${k}`))
      .map(([n]) => n);
    if (used.length > 0) return `environment ${used.join(', ')}`;
  }
  if (key.startsWith('recognizers') && fromEnv.has('recognizers')) return 'environment VAGENT_RECOGNIZERS';
  if (fromEnv.has(key)) {
    const all = { ...ENV_KEYS, ...Object.fromEntries(Object.entries(LIVEKIT_ENV).map(([n, k]) => [n, `livekit.${k}`])) };
    const name = Object.entries(all).find(([, k]) => k === key)?.[0];
    return name ? `environment ${name}` : 'environment';
  }
  return file ? `config file ${file}` : 'defaults';
}

/**
 * Builds the daemon's settings.
 *
 * @param flags Values from `vagent serve` flags.
 * @param env   The environment (default `process.env`).
 * @returns Validated {@link Settings} with `state_dir` an absolute path.
 * @throws ConfigError naming every invalid setting and where it came from.
 */
export function loadSettings(flags: SettingsFlags = {}, env: NodeJS.ProcessEnv = process.env): Settings {
  const configFile = flags.config ?? env.VAGENT_CONFIG;
  const merged: Record<string, unknown> = configFile ? { ...readConfigFile(configFile) } : {};
  const fileLlm = merged.llm as Record<string, unknown> | undefined;
  if (fileLlm !== null && typeof fileLlm === 'object' && 'api_key' in fileLlm) {
    throw new ConfigError(
      `invalid settings:\n  llm.api_key: is read from the environment only, not from a config file: remove it from ${configFile} and export VAGENT_LLM_API_KEY=… in the shell that runs vagent serve`,
    );
  }
  const fromEnv = new Set<string>();
  const fromFlags = new Set<string>();

  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const v = env[name];
    if (v !== undefined && v !== '') {
      merged[key] = v;
      fromEnv.add(key);
    }
  }
  const livekit = { ...((merged.livekit as Record<string, unknown> | undefined) ?? {}) };
  for (const [name, key] of Object.entries(LIVEKIT_ENV)) {
    const v = env[name];
    if (v !== undefined && v !== '') {
      livekit[key] = v;
      fromEnv.add(`livekit.${key}`);
    }
  }
  merged.livekit = livekit;
  for (const [block, names] of Object.entries(BLOCK_ENV)) {
    const section = { ...((merged[block] as Record<string, unknown> | undefined) ?? {}) };
    for (const [name, key] of Object.entries(names)) {
      const v = env[name];
      if (v !== undefined && v !== '') {
        section[key] = v;
        fromEnv.add(`${block}.${key}`);
      }
    }
    merged[block] = section;
  }
  const recognizersEnv = env.VAGENT_RECOGNIZERS;
  if (recognizersEnv !== undefined && recognizersEnv.trim() !== '') {
    merged.recognizers = {
      ...((merged.recognizers as Record<string, unknown> | undefined) ?? {}),
      ...parseRecognizersEnv(recognizersEnv),
    };
    fromEnv.add('recognizers');
  }

  if (flags.host !== undefined) {
    merged.host = flags.host;
    fromFlags.add('host');
  }
  if (flags.port !== undefined) {
    merged.port = flags.port;
    fromFlags.add('port');
  }
  const stateDirRaw = flags.stateDir ?? env.VAGENT_STATE_DIR ?? (merged.state_dir as string | undefined);
  merged.state_dir = resolveStateDir(stateDirRaw, { ...env, VAGENT_STATE_DIR: undefined });

  const result = SettingsSchema.safeParse(merged);
  if (!result.success) {
    const lines = result.error.issues.map((issue: z.core.$ZodIssue) => {
      const key = issue.path.join('.');
      return `  ${key || '(settings)'}: ${issue.message} (from ${sourceOf(key, fromEnv, fromFlags, configFile)})`;
    });
    throw new ConfigError(`invalid settings:\n${lines.join('\n')}`);
  }
  return result.data;
}

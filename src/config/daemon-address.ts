/**
 * The daemon's address as local commands should print it (`vagent serve` and
 * `vagent admin key create` say how to log in; README.md "Quick start").
 *
 * `vagent serve` records where it really listens in `<state dir>/daemon.json` (mode 0600) once
 * it is bound, so that `vagent admin …` run with no flags still names the port, host and public
 * URL the daemon was started with (`--port 9000`, its own config file), not the default 8787.
 * The record holds no secret; it stays after the daemon stops (the last known address).
 */
import fs from 'node:fs';
import { z } from 'zod';
import { statePaths } from './paths.js';
import { clientUrl, type Settings } from './schema.js';

/** `<state dir>/daemon.json`: what the daemon that last ran on a state dir used. */
const DaemonAddressSchema = z.object({
  /** `http://host:port` a client on this machine reaches the daemon at (wildcard host → loopback). */
  url: z.string().url(),
  /** The `public_url` setting of that daemon, or null. */
  public_url: z.string().url().nullable(),
  /** Its `auth_mode` (docs/api-decisions.md "Auth"). */
  auth_mode: z.enum(['audit', 'enforce']),
  /** Its process id and start time (ISO 8601), for people reading the file. */
  pid: z.number().int(),
  started_at: z.string(),
});

/** A daemon's recorded address; see {@link DaemonAddressSchema}. */
export type DaemonAddress = z.infer<typeof DaemonAddressSchema>;

/**
 * Records the daemon's address in its state dir (write to a temp file, then rename).
 * @throws the filesystem error when the state dir is not writable.
 */
export function writeDaemonAddress(stateDir: string, record: DaemonAddress): void {
  const file = statePaths(stateDir).daemonAddress;
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** The recorded address, or undefined when none was recorded or the file is unreadable or malformed (never throws). */
export function readDaemonAddress(stateDir: string): DaemonAddress | undefined {
  try {
    const parsed = DaemonAddressSchema.safeParse(JSON.parse(fs.readFileSync(statePaths(stateDir).daemonAddress, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The URL to give `vagent login --url`: the `public_url` of these settings, else the recorded
 * daemon's `public_url`, else the address it recorded, else `http://host:port` of these settings.
 * A trailing slash is dropped.
 */
export function loginUrl(settings: Pick<Settings, 'host' | 'port' | 'public_url'>, record: DaemonAddress | undefined): string {
  const url = settings.public_url ?? record?.public_url ?? record?.url ?? clientUrl(settings.host, settings.port);
  return url.replace(/\/+$/, '');
}

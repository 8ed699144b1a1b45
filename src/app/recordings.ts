/**
 * Call recordings on disk (docs/media.md "Recordings"): which calls are recorded (the agent's
 * `recording`, else the tenant's), where each one's WAV lives in the state dir
 * (`recordings/cl_<N>.wav`, written by the media worker that carries the call), reading one for
 * its tenant, and removing them: with their session when retention or `vagent admin purge`
 * deletes it, and oldest first beyond the disk cap (`recordings_max_mb`).
 *
 * A recording is a file and nothing in the database: a call has one when its file exists, so a
 * purge that removes the session and a crash that loses the file never disagree with a row.
 */
import fs from 'node:fs';
import path from 'node:path';
import { effectiveRecording, type RecordingMode } from '../domain/agent.js';
import { ApiError } from '../domain/errors.js';
import { WAV_HEADER_BYTES, wavHeader } from '../media/recorder.js';
import type { RecordingSetting } from '../media/worker-protocol.js';
import type { Repos } from '../store/index.js';

/** A recording's file name: `cl_<N>.wav`. */
const FILE_RE = /^cl_([1-9][0-9]{0,15})\.wav$/;

/** The `recording` of a stored agent definition (JSON text), if it sets one. */
function agentRecording(definition: string | undefined): RecordingMode | undefined {
  if (definition === undefined) return undefined;
  try {
    const mode = (JSON.parse(definition) as { recording?: unknown }).recording;
    return mode === 'off' || mode === 'mono' || mode === 'dual' ? mode : undefined;
  } catch {
    return undefined;
  }
}

/** A recording on disk. */
export interface RecordingFile {
  /** The call's number N (`cl_<N>`). */
  n: number;
  /** Absolute path of the WAV. */
  file: string;
  /** Bytes. */
  size: number;
  /** Last written, epoch ms. */
  mtimeMs: number;
}

/** The recordings of a state dir. */
export class RecordingService {
  /**
   * @param repos the store (tenants' settings, calls' owners)
   * @param dir   the state dir's `recordings/`; null: no recording is ever made (tests without a state dir)
   * @param maxBytes disk cap of all recordings together, bytes; 0: none
   */
  constructor(
    private readonly repos: Repos,
    readonly dir: string | null,
    private readonly maxBytes = 0,
    private readonly baseUrl: () => string = () => 'http://127.0.0.1:8787',
  ) {}

  /** Where call `n`'s recording is served (`GET /v1/calls/cl_<n>/recording`), or null when it has none. */
  urlOf(n: number): string | null {
    return this.has(n) ? `${this.baseUrl().replace(/\/+$/, '')}/v1/calls/cl_${n}/recording` : null;
  }

  /** The tenant's own `recording` setting, or null when it has none. */
  tenantMode(tenantId: string): RecordingMode | null {
    return this.repos.tenants.getTenant(tenantId)?.recording ?? null;
  }

  /**
   * What the media session of call `n` of tenant `tenantId` records, for an agent whose own
   * setting is `agentMode`: null when recording is off (or there is no state dir).
   */
  settingFor(tenantId: string, n: number, agentMode: RecordingMode | undefined): RecordingSetting | null {
    const mode = effectiveRecording(agentMode, this.tenantMode(tenantId));
    if (mode === 'off' || this.dir === null) return null;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // Room for the new one: the oldest go first once all of them pass the cap.
    this.enforceCap();
    return { channels: mode, file: this.pathOf(n) };
  }

  /**
   * One line for the daemon's start-up: which tenants and agents have their calls recorded, or
   * that none does, where the files go and the disk cap.
   */
  notice(): string {
    const on: string[] = [];
    for (const t of this.repos.tenants.listTenants()) {
      if (t.recording !== null && t.recording !== 'off') on.push(`tenant ${t.id} (${t.recording})`);
      for (const a of this.repos.agents.list(t.id)) {
        const mode = agentRecording(this.repos.agents.revision(a.digest));
        if (mode !== undefined && mode !== (t.recording ?? 'off')) on.push(`${t.id}/${a.id} (${mode})`);
      }
    }
    const cap =
      this.maxBytes > 0 ? `cap ${Math.round(this.maxBytes / 1024 / 1024)} MiB, oldest removed first` : 'no disk cap (recordings_max_mb)';
    if (on.length === 0)
      return 'call recording: off (no agent or tenant records calls; set recording: mono|dual on an agent, or vagent admin tenant set NAME --recording dual)';
    const shown = on.length > 8 ? `${on.slice(0, 8).join(', ')} and ${on.length - 8} more` : on.join(', ');
    return `call recording: ${shown}; files in ${this.dir ?? '(none)'}, ${cap}; kept as long as their session`;
  }

  /** Where call `n`'s recording is (or would be). */
  pathOf(n: number): string {
    if (this.dir === null) throw new Error('recordings are not kept without a state dir');
    return path.join(this.dir, `cl_${n}.wav`);
  }

  /** Whether call `n` has a recording. */
  has(n: number): boolean {
    if (this.dir === null) return false;
    try {
      return fs.statSync(this.pathOf(n)).isFile();
    } catch {
      return false;
    }
  }

  /**
   * The recording of call `cl_<n>` (its owner already checked): its path and size.
   * @throws ApiError not_found when the call has none
   */
  fileOf(n: number): { file: string; size: number } {
    const missing = new ApiError('not_found', `call cl_${n} has no recording`, { param: 'call_id' });
    if (this.dir === null) throw missing;
    try {
      const st = fs.statSync(this.pathOf(n));
      if (st.isFile()) return { file: this.pathOf(n), size: st.size };
    } catch {
      // None.
    }
    throw missing;
  }

  /** Every recording on disk, oldest first. */
  list(): RecordingFile[] {
    if (this.dir === null) return [];
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: RecordingFile[] = [];
    for (const name of names) {
      const m = FILE_RE.exec(name);
      if (!m) continue;
      const file = path.join(this.dir, name);
      try {
        const st = fs.statSync(file);
        if (st.isFile()) out.push({ n: Number(m[1]), file, size: st.size, mtimeMs: st.mtimeMs });
      } catch {
        // Removed meanwhile.
      }
    }
    return out.sort((a, b) => a.mtimeMs - b.mtimeMs || a.n - b.n);
  }

  /** Removes the recordings of calls `ns` (their sessions were purged). Never throws. */
  remove(ns: Iterable<number>): number {
    if (this.dir === null) return 0;
    let removed = 0;
    for (const n of ns) {
      try {
        fs.unlinkSync(this.pathOf(n));
        removed++;
      } catch {
        // None, or already gone.
      }
    }
    return removed;
  }

  /**
   * Writes the right sizes into the header of every recording whose header does not match its
   * file (one cut short by a crash or `kill -9`: its header still says 0 bytes), so each plays to
   * its end. Run at start-up, before any call records. Returns how many were repaired; never throws.
   */
  repairHeaders(): number {
    let repaired = 0;
    for (const f of this.list()) {
      try {
        const fd = fs.openSync(f.file, 'r+');
        try {
          const head = Buffer.alloc(WAV_HEADER_BYTES);
          if (fs.readSync(fd, head, 0, WAV_HEADER_BYTES, 0) < WAV_HEADER_BYTES || head.toString('latin1', 0, 4) !== 'RIFF') continue;
          const channels = head.readUInt16LE(22);
          if (channels !== 1 && channels !== 2) continue;
          const blockAlign = 2 * channels;
          const data = Math.floor((f.size - WAV_HEADER_BYTES) / blockAlign) * blockAlign;
          if (head.readUInt32LE(40) === data) continue;
          fs.writeSync(fd, wavHeader(channels, data), 0, WAV_HEADER_BYTES, 0);
          repaired++;
        } finally {
          fs.closeSync(fd);
        }
      } catch {
        // Unreadable: left as it is.
      }
    }
    return repaired;
  }

  /**
   * Removes the oldest recordings until all of them fit in the disk cap (none when the cap is 0).
   * The recording of a call still running (`live`) is never removed. Returns how many went.
   */
  enforceCap(live: ReadonlySet<number> = new Set()): number {
    if (this.maxBytes <= 0) return 0;
    const files = this.list();
    let total = files.reduce((sum, f) => sum + f.size, 0);
    let removed = 0;
    for (const f of files) {
      if (total <= this.maxBytes) break;
      if (live.has(f.n)) continue;
      try {
        fs.unlinkSync(f.file);
        total -= f.size;
        removed++;
      } catch {
        // Already gone.
      }
    }
    return removed;
  }
}

/**
 * The host `vagent agent test --voice` runs its scenarios on (docs/agent-tests.md "Voice"): an
 * ephemeral daemon — `vagent serve`'s own start-up (./daemon.ts) — in this process, on a
 * loopback port chosen by the system, over a fresh state dir in a temp folder, with the
 * embedded recogniser hearing its carrier streams (docs/media.md "Speech recognition"). The
 * agent tested is stored and an API key made before the daemon starts; nothing is written
 * outside the temp folder, which {@link VoiceHost.close} removes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SettingsSchema, type Settings } from '../config/schema.js';
import type { Principal } from '../app/context.js';
import { INTERNAL } from '../app/unit-of-work.js';
import { openRuntime } from './runtime.js';
import { startDaemon } from './daemon.js';

/** A running ephemeral daemon with one agent and one API key. */
export interface VoiceHost {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** An API key of its tenant `default` (the media streams' and `/v1`'s Bearer). */
  key: string;
  /**
   * Sets the daemon's clock so that it reads `iso` (ISO 8601) now, and runs on from there; with
   * undefined, the real time again. An inbound call's session takes its reference time for
   * relative dates from the clock when it opens, as it carries no `context.now`.
   * @throws RangeError for a time that does not parse
   */
  setNow(iso: string | undefined): void;
  /** Stops the daemon and removes the temp folder. */
  close(): Promise<void>;
}

/** Options of {@link openVoiceHost}. */
export interface VoiceHostOptions {
  /** The `llm` settings (docs/llm.md); default none. */
  llm?: Settings['llm'];
  /** The pricing costs are metered with (default: the shipped config/pricing.yaml). */
  pricingFile?: string;
}

/**
 * Starts a {@link VoiceHost} holding agent `agentId` (its definition stored as `PUT
 * /v1/agents/{id}` would).
 * @throws ApiError invalid_request for a definition the daemon refuses; Error when the daemon
 *   cannot start (the temp folder is removed then)
 */
export async function openVoiceHost(agentId: string, definition: unknown, options: VoiceHostOptions = {}): Promise<VoiceHost> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-agent-voice-'));
  const noAgents = path.join(dir, 'no-agents');
  fs.mkdirSync(noAgents);
  const remove = (): void => fs.rmSync(dir, { recursive: true, force: true });
  try {
    const settings = SettingsSchema.parse({
      state_dir: path.join(dir, 'state'),
      host: '127.0.0.1',
      port: 0,
      log_level: 'silent',
      agents_dir: noAgents,
      recognizer: 'pocketsphinx',
      media_workers: 1,
      ...(options.pricingFile ? { pricing_file: options.pricingFile } : {}),
      ...(options.llm ? { llm: options.llm } : {}),
    });
    const runtime = openRuntime(settings, { recover: false });
    let key: string;
    try {
      const principal: Principal = {
        tenantId: 'default',
        keyId: 'agent-test',
        requestId: 'agent-test',
        method: 'LOCAL',
        route: 'agent test',
      };
      await runtime.services.agents.put(principal, agentId, definition, INTERNAL);
      key = runtime.services.tenants.createKey('default').key;
    } finally {
      runtime.close();
    }
    let offsetS = 0;
    const daemon = await startDaemon(settings, () => undefined, {}, { nowS: () => Math.floor(Date.now() / 1000) + offsetS });
    return {
      url: daemon.url,
      key,
      setNow(iso) {
        if (iso === undefined) {
          offsetS = 0;
          return;
        }
        const ms = Date.parse(iso);
        if (!Number.isFinite(ms)) throw new RangeError(`not a time: ${iso}`);
        offsetS = Math.round((ms - Date.now()) / 1000);
      },
      async close() {
        try {
          await daemon.stop();
        } finally {
          remove();
        }
      },
    };
  } catch (err) {
    remove();
    throw err;
  }
}

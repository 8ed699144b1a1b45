/**
 * Starting and stopping the daemon's call audio (issue 16): the recogniser in force (setting
 * `recognizer`), the media worker pool (setting `media_workers`), the carrier streams, and
 * what `/v1/health` and the start-up lines say about them.
 */
import os from 'node:os';
import type { Settings } from '../config/schema.js';
import { pocketsphinxStatus } from '../media/pocketsphinx.js';
import { MediaWorkerPool } from '../media/worker-pool.js';
import type { Services } from '../services/index.js';
import type { HealthExtras } from './app.js';
import { MediaRooms } from './media-rooms.js';
import { MediaStreams, type MediaStreamsOptions, type RecognizerSetting } from './media-streams.js';

/** The running call audio of a daemon. */
export interface RunningMedia {
  streams: MediaStreams;
  pool: MediaWorkerPool;
  /** vagent in LiveKit call rooms, when LiveKit is configured (issue 17). */
  rooms: MediaRooms | null;
  /** `/v1/health`'s call-audio fields. */
  health(): HealthExtras;
  /** One start-up line: which recogniser hears callers, or why none does. */
  notice(): string;
  /** Stops the workers (after the streams were closed). */
  stop(): Promise<void>;
}

/** The recogniser in force for setting `recognizer` (`auto` looks for the embedded one). */
export function resolveRecognizer(setting: Settings['recognizer']): { kind: RecognizerSetting; reason?: string } {
  if (setting === 'off') return { kind: 'off', reason: 'recognizer is set to off' };
  if (setting === 'fake') return { kind: 'fake' };
  const status = pocketsphinxStatus();
  if (status.available) return { kind: 'pocketsphinx' };
  return { kind: 'off', reason: status.reason ?? 'the embedded recogniser (pocketsphinx) is not installed' };
}

/**
 * Default worker threads: one per CPU, at least 2 and at most 4. Two workers on a 2-core host
 * kept reply latency p99 within the end-of-utterance silence + 48 ms at 100 calls, where one
 * worker gave + 75 ms (`npm run bench`, bench/media.mjs).
 */
export function defaultMediaWorkers(): number {
  return Math.min(4, Math.max(2, os.availableParallelism()));
}

/**
 * Starts the media workers and the carrier streams over `services`.
 * @throws Error when the worker is not built or a worker cannot start; the daemon then runs without call audio
 */
export async function startMedia(settings: Settings, services: Services, log: MediaStreamsOptions['log'] & { error(obj: object, msg: string): void }): Promise<RunningMedia> {
  const recognizer = resolveRecognizer(settings.recognizer);
  if (settings.recognizer === 'pocketsphinx' && recognizer.kind === 'off') {
    throw new Error(`recognizer is set to pocketsphinx but ${recognizer.reason}`);
  }
  const orphans = await services.media.endOrphanedStreams();
  if (orphans > 0) log.warn({ calls: orphans }, 'calls on carrier streams when vagent last stopped were ended (their streams are gone)');
  const pool = await MediaWorkerPool.start({
    size: settings.media_workers ?? defaultMediaWorkers(),
    workerData: { embeddedRecognizer: recognizer.kind === 'pocketsphinx' },
    onWorkerExit: (index, error) => log.error({ worker: index, err: error }, 'a media worker stopped; its calls ended, and it was replaced'),
  });
  const streams = new MediaStreams(services, { pool, recognizer, log });
  let rooms: MediaRooms | null = null;
  let roomPool: MediaWorkerPool | null = null;
  if (services.telephony.configured) {
    // rtc-node serves one thread per process: LiveKit rooms run in a media child process.
    roomPool = await MediaWorkerPool.start({
      size: 1,
      mode: 'process',
      workerData: { embeddedRecognizer: recognizer.kind === 'pocketsphinx' },
      onWorkerExit: (index, error) => log.error({ worker: `room-${index}`, err: error }, 'the LiveKit room media process stopped; its calls ended, and it was restarted'),
    });
    rooms = new MediaRooms(services, {
      pool: roomPool, driver: settings.livekit.rooms, log,
      recognizerSpec: (params) => streams.recognizerSpec(params),
    });
    const lost = await rooms.endOrphans();
    if (lost > 0) log.warn({ calls: lost }, 'LiveKit calls in progress when vagent last stopped were hung up and ended (their room media was lost)');
    services.calls.setCallRooms(rooms);
    services.inbound.setCallRooms(rooms);
  }
  const liveRooms = rooms;
  services.callLines.setMediaLines({ hangUp: (n) => streams.hangUp(n) || (liveRooms?.hangUp(n) ?? false) });
  const provider = recognizer.kind === 'off' ? null : recognizer.kind;
  return {
    streams,
    pool,
    rooms,
    health: () => ({
      recognition: recognizer.kind === 'off'
        ? { status: 'off', provider: null, reason: recognizer.reason ?? 'off' }
        : { status: 'on', provider },
      media: { workers: settings.media_workers ?? defaultMediaWorkers(), streams: streams.size, ...(rooms ? { rooms: rooms.size } : {}) },
    }),
    notice: () => recognizer.kind === 'off'
      ? `Speech recognition is off (${recognizer.reason}); callers on carrier streams can still key DTMF. Install: apt-get install pocketsphinx pocketsphinx-en-us`
      : `Call audio: carrier streams at /v1/media/{twilio,exotel,plivo}; speech recognition by ${provider}.`,
    stop: async () => {
      await Promise.all([pool.close(), roomPool?.close()]);
    },
  };
}

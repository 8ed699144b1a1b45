/**
 * Starting and stopping the daemon's call audio (issues 16, 17): the recognisers in force
 * (settings `recognizer` and `recognizers`, chosen per call by the agent's language in
 * src/adapters/recognizers/recognizer-choice.ts), the media worker pool (setting `media_workers`), the carrier streams, and
 * what `/v1/health` and the start-up lines say about them.
 */
import os from 'node:os';
import type { Settings } from '../config/schema.js';
import { pocketsphinxStatus } from '../adapters/recognizers/pocketsphinx.js';
import { withFakeScripts } from '../adapters/recognizers/fake-script.js';
import {
  chooseRecognizer,
  describeRecognition,
  recognitionOf,
  type CallRecognizerChoice,
  type EmbeddedStatus,
  type RecognitionConfig,
  type RecognitionLine,
} from '../adapters/recognizers/recognizer-choice.js';
import { MediaWorkerPool } from './media-worker/worker-pool.js';
import type { Services } from '../app/index.js';
import { ACTIVITY_HEARTBEAT_MS } from '../app/media-calls.js';
import type { HealthExtras } from '../http/app.js';
import { MediaRooms } from './media-rooms.js';
import { MediaStreams, type MediaStreamsOptions } from './media-streams.js';

/** The running call audio of a daemon. */
export interface RunningMedia {
  streams: MediaStreams;
  pool: MediaWorkerPool;
  /** vagent in LiveKit call rooms, when LiveKit is configured (docs/media.md "LiveKit rooms"). */
  rooms: MediaRooms | null;
  /**
   * `/v1/health`'s call-audio fields; with `language`, also what hears it (`for_language`).
   * @throws RangeError for a `language` that is not a BCP-47 tag
   */
  health(language?: string): HealthExtras;
  /** One start-up line: which recogniser hears callers of each language, or why none does. */
  notice(): string;
  /** Stops the workers (after the streams were closed). */
  stop(): Promise<void>;
}

/**
 * Whether the embedded recogniser is usable here, and an error when a setting requires it but
 * it is not installed (`recognizer: pocketsphinx`, or a `recognizers` range set to it).
 * @throws Error naming the setting and how to install the recogniser
 */
export function embeddedStatus(
  settings: Pick<Settings, 'recognizer' | 'recognizers'>,
  status: EmbeddedStatus = pocketsphinxStatus(),
): EmbeddedStatus {
  if (status.available) return { available: true };
  const named = [
    ...(settings.recognizer === 'pocketsphinx' ? ['recognizer'] : []),
    ...Object.entries(settings.recognizers)
      .filter(([, p]) => p === 'pocketsphinx')
      .map(([r]) => `recognizers.${r}`),
  ];
  if (named.length > 0)
    throw new Error(`${named.join(', ')} is set to pocketsphinx but ${status.reason ?? 'the embedded recogniser is not installed'}`);
  return { available: false, reason: status.reason ?? 'the embedded recogniser (pocketsphinx) is not installed' };
}

/**
 * The daemon's recogniser per call: {@link chooseRecognizer} by the agent's language; only with
 * `recognizer: fake`, the fake recogniser's script is read from the call's own parameters
 * (src/adapters/recognizers/fake-script.ts).
 */
export function recognizerChoice(config: RecognitionConfig, embedded: EmbeddedStatus): CallRecognizerChoice {
  const choose: CallRecognizerChoice = (language) => chooseRecognizer(config, language, embedded);
  return config.recognizer === 'fake' ? withFakeScripts(choose) : choose;
}

/** `/v1/health`'s `recognition` for the lines of {@link describeRecognition} (no keys). */
export function recognitionHealth(lines: readonly RecognitionLine[]): HealthExtras['recognition'] {
  const def = lines[0]!;
  const languages = lines.map((l) => ({
    range: l.range,
    provider: l.provider,
    fallback: l.fallback,
    ...(l.reason ? { reason: l.reason } : {}),
  }));
  const on = lines.some((l) => l.provider !== null);
  if (!on) return { status: 'off', provider: null, reason: def.reason ?? 'off', languages };
  return {
    status: 'on',
    provider: def.provider,
    ...(def.provider === null && def.reason ? { reason: def.reason } : {}),
    languages,
  };
}

/** The start-up line about speech recognition, per language range (no keys). */
export function recognitionNotice(lines: readonly RecognitionLine[]): string {
  if (lines.every((l) => l.provider === null)) {
    return `Speech recognition is off (${lines[0]!.reason ?? 'off'}); callers on carrier streams can still key DTMF. Install: apt-get install pocketsphinx pocketsphinx-en-us, or set recognizer: deepgram or sarvam with its API key`;
  }
  const parts = lines.map((l) => {
    const who = l.range === '*' ? 'by default' : `for ${l.range}`;
    if (l.provider === null) return `off ${who} (${l.reason ?? 'off'})`;
    return `${l.provider}${l.fallback ? ` (fallback ${l.fallback})` : ''} ${who}`;
  });
  return `Call audio: carrier streams at /v1/media/{twilio,exotel,plivo}; speech recognition: ${parts.join('; ')}.`;
}

/**
 * Longest the daemon waits for its media warm-up before it listens, ms (docs/media.md, "The first
 * call after start"); the rest goes on in the background. The warm-up takes a fraction of
 * this on an idle 2-core host (bench/media.mjs, section (d)).
 */
export const WARM_UP_WAIT_MS = 1500;

/**
 * `/v1/health`'s `media.warm_up`: `ready` once every worker (and room process) has run its
 * warm-up and converted every opening handed to it so far, else `warming`; `opening_clips`:
 * the opening clips converted ahead of calls by every worker thread.
 */
export function warmUpHealth(
  pool: MediaWorkerPool,
  roomPool: MediaWorkerPool | null,
): { state: 'warming' | 'ready'; opening_clips: number } {
  const threads = pool.warmth();
  const ready = threads.ready && (roomPool?.warmth().ready ?? true);
  return { state: ready ? 'ready' : 'warming', opening_clips: threads.clips };
}

/**
 * Default worker threads: one per CPU, at least 2 and at most 4. Two workers on a 2-core host
 * kept reply latency p99 within the end-of-utterance silence + 48 ms at 100 calls, where one
 * worker gave + 75 ms (`npm run bench`, bench/media.mjs).
 */
export function defaultMediaWorkers(): number {
  return Math.min(4, Math.max(2, os.availableParallelism()));
}

/** Options of {@link startMedia} that are not settings. */
export interface StartMediaOptions {
  /** Longest wait for the warm-up, ms; default {@link WARM_UP_WAIT_MS}. */
  warmUpWaitMs?: number;
  /**
   * A development aid, never a setting: the URL of a module whose `connectRoom` joins LiveKit
   * rooms instead of rtc-node's (src/adapters/livekit/room.ts `roomDriver`; the fake LiveKit's,
   * src/devtools/room-fake.ts). The daemon's composition root sets it (src/daemon/daemon.ts).
   */
  roomDriver?: string;
}

/**
 * Starts the media workers and the carrier streams over `services`, and warms the workers up
 * (waiting at most `options.warmUpWaitMs` for it).
 * @throws Error when the worker is not built or a worker cannot start; the daemon then runs without call audio
 */
export async function startMedia(
  settings: Settings,
  services: Services,
  log: MediaStreamsOptions['log'] & { error(obj: object, msg: string): void },
  options: StartMediaOptions = {},
): Promise<RunningMedia> {
  const { warmUpWaitMs = WARM_UP_WAIT_MS, roomDriver } = options;
  const embedded = embeddedStatus(settings);
  const lines = describeRecognition(settings, embedded);
  // The embedded recogniser's warm engines start only where a language may use it (as the
  // recogniser or as a cloud provider's fallback).
  const embeddedUsed = embedded.available && lines.some((l) => l.provider === 'pocketsphinx' || l.fallback === 'pocketsphinx');
  const orphans = await services.media.endOrphanedStreams();
  if (orphans > 0) log.warn({ calls: orphans }, 'calls on carrier streams when vagent last stopped were ended (their streams are gone)');
  const workers = settings.media_workers ?? defaultMediaWorkers();
  const pool = await MediaWorkerPool.start({
    size: workers,
    workerData: { embeddedRecognizer: embeddedUsed },
    onWorkerExit: (index, error) =>
      log.error({ worker: index, err: error }, 'a media worker stopped; its calls ended, and it was replaced'),
  });
  const streams = new MediaStreams(services, {
    pool,
    recognizerFor: recognizerChoice(settings, embedded),
    log,
  });
  let rooms: MediaRooms | null = null;
  let roomPool: MediaWorkerPool | null = null;
  if (services.telephony.configured) {
    // rtc-node serves one thread per process: LiveKit rooms run in media child processes, as
    // many as the worker threads (a room's audio goes through rtc-node's native client, whose
    // per-frame cost keeps one process to a few dozen calls: bench/media-livekit.mjs).
    roomPool = await MediaWorkerPool.start({
      size: workers,
      mode: 'process',
      workerData: { embeddedRecognizer: embeddedUsed, livekitRooms: true, ...(roomDriver === undefined ? {} : { roomDriver }) },
      onWorkerExit: (index, error) =>
        log.error({ worker: `room-${index}`, err: error }, 'the LiveKit room media process stopped; its calls ended, and it was restarted'),
    });
    if (roomDriver !== undefined)
      log.warn({ room_driver: roomDriver }, 'development aid: LiveKit call rooms are joined with a development room driver, not rtc-node');
    rooms = new MediaRooms(services, {
      pool: roomPool,
      log,
      recognizerSpec: (language, params) => streams.recognizerSpec(language, params),
    });
    const lost = await rooms.endOrphans();
    if (lost > 0)
      log.warn({ calls: lost }, 'LiveKit calls in progress when vagent last stopped were hung up and ended (their room media was lost)');
    services.calls.setCallRooms(rooms);
    services.inbound.setCallRooms(rooms);
  }
  const liveRooms = rooms;
  services.callLines.setMediaLines({ hangUp: (n) => streams.hangUp(n) || (liveRooms?.hangUp(n) ?? false) });
  // The media heartbeat: the calls whose stream sent frames, and those in a room, were alive now.
  const heartbeat = setInterval(() => {
    void services.media.noteActivity([...streams.takeActive(), ...(liveRooms?.liveCalls() ?? [])]);
  }, ACTIVITY_HEARTBEAT_MS);
  heartbeat.unref();
  // Warm-up ahead of the first call (docs/media.md, "The first call after start"): before the
  // daemon listens (for at most WARM_UP_WAIT_MS), the workers run their media path once and
  // convert the openings already cached; each opening pre-synthesis makes later (at start-up
  // on a new state dir, when an agent is applied) is converted as soon as it is cached.
  services.agents.onOpeningReady((files) => {
    void pool.warm(files);
    void roomPool?.warm(files);
  });
  const warmStarted = performance.now();
  const openings = services.agents.cachedOpeningFiles();
  const warmed = Promise.all([pool.warm(openings), roomPool?.warm(openings) ?? []]).then((answers) => {
    // A worker that stopped first (shutdown, a fault) answers null: then nothing was warmed up.
    if (answers.flat().includes(null)) return;
    log.info({ ms: Math.round(performance.now() - warmStarted), opening_clips: pool.warmth().clips }, 'media workers warmed up');
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    warmed,
    new Promise((resolve) => {
      timer = setTimeout(resolve, warmUpWaitMs);
    }),
  ]);
  clearTimeout(timer);
  return {
    streams,
    pool,
    rooms,
    health: (language) => ({
      recognition: {
        ...recognitionHealth(lines),
        ...(language === undefined ? {} : { for_language: recognitionOf(settings, language, embedded) }),
      },
      media: { workers, streams: streams.size, ...(rooms ? { rooms: rooms.size } : {}), warm_up: warmUpHealth(pool, roomPool) },
    }),
    notice: () => recognitionNotice(lines),
    stop: async () => {
      clearInterval(heartbeat);
      await Promise.all([pool.close(), roomPool?.close()]);
    },
  };
}

/**
 * A media worker thread: media runs off the API's event loop. It holds the call media sessions
 * of the streams the main thread attached to it: each stream's {@link CarrierTransport} (parse,
 * decode, resample), a VAD detector, a recogniser stream, the {@link CallMediaSession}
 * (endpointing, barge-in, DTMF, silence, hang-up) and its paced playout. Turns go to the main
 * thread as `turn` messages (the sessions service lives there); replies come back as references
 * to cached clip files, which this worker reads and converts to the stream's outbound format once
 * per format (./worker-clips.ts). Messages leave in batches (./worker-outbox.ts); the warm-up
 * before the first call is ./worker-warm.ts.
 *
 * Protocol: ../../media/worker-protocol.ts. Started by ./worker-pool.ts with `workerData` of
 * {@link MediaWorkerData}.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CallMediaSession } from '../../media/call-session.js';
import type { ReplyClip, TurnReply, TurnRequest } from '../../media/call-session-port.js';
import { CarrierTransport } from '../../media/carrier-transport.js';
import type { LiveKitRoomTransport } from '../../adapters/livekit/livekit-transport.js';
import type { MediaTransport } from '../../media/transport.js';
import { PocketsphinxRecognizer } from '../../adapters/recognizers/pocketsphinx.js';
import type { SpeechRecognizer } from '../../media/recognizer.js';
import { buildRecognizer } from '../../adapters/recognizers/recognizer-factory.js';
import { WebRtcVad } from '../../media/vad-webrtc.js';
import { RecordingTransport } from '../../media/recording-transport.js';
import { systemClock } from '../../media/playout-clock.js';
import { RecordingFile } from './recording-file.js';
import { ClipFrameCache } from './worker-clips.js';
import { processPort, WorkerOutbox, type WorkerPort } from './worker-outbox.js';
import { WorkerWarmUp } from './worker-warm.js';
import { emptyStreamStats } from '../../media/worker-protocol.js';
import type { ClipRef, FromWorker, RecognizerSpec, ReplyData, StreamSettings, ToWorker } from '../../media/worker-protocol.js';

/** What the pool passes a worker. */
export interface MediaWorkerData {
  /** Bytes of converted clips kept per worker (LRU); default 64 MiB. */
  clipCacheBytes?: number;
  /** Whether streams may use the embedded recogniser (pocketsphinx): its warm engines start with the worker. */
  embeddedRecognizer?: boolean;
  /** A LiveKit room process: rtc-node and the room transport are loaded before it says it is ready, not on its first call. */
  livekitRooms?: boolean;
  /**
   * URL of a module whose `connectRoom` joins rooms instead of rtc-node's (../../adapters/livekit/room.ts
   * `roomDriver`): set by the daemon's composition root only as a development aid (the fake
   * LiveKit's rooms, src/devtools/room-fake.ts).
   */
  roomDriver?: string;
}

const data = (parentPort ? (workerData ?? {}) : JSON.parse(process.env['VAGENT_MEDIA_WORKER_DATA'] ?? '{}')) as MediaWorkerData;

/** Speech the VAD must hear over playout before it is a barge-in, on a phone line, ms. */
export const PHONE_BARGE_IN_MIN_SPEECH_MS = 200;
const port: WorkerPort | null = parentPort ?? processPort();
if (!port) throw new Error('media worker: not started as a worker thread or a child process with IPC');

const outbox = new WorkerOutbox(port);
function post(msg: FromWorker): void {
  outbox.post(msg);
}
function sendFrame(id: number, text: string): void {
  outbox.sendFrame(id, text);
}
const clipCache = new ClipFrameCache(data.clipCacheBytes ?? 64 * 1024 * 1024);

// --- recognisers ---------------------------------------------------------------------------

/** The embedded recogniser of this worker (its engine processes are shared by its streams). */
let embedded: PocketsphinxRecognizer | null = null;
function loadEmbedded(): void {
  if (!data.embeddedRecognizer) return;
  embedded = new PocketsphinxRecognizer();
  // The grammars of a call's first answers (the opening's step, a yes to a readback) start warm.
  embedded.prewarm(['free', 'yes_no', 'name']);
}

/**
 * The recogniser of stream `id` (see ../../adapters/recognizers/recognizer-factory.ts); fallback switches become its
 * events. A cloud recogniser gets 60% of the stream's recogniser deadline to answer the end of
 * speech, so its fallback still has the rest to hear the utterance.
 */
function recognizerOf(spec: RecognizerSpec, id: number, recognizerTimeoutMs: number): SpeechRecognizer {
  return buildRecognizer(spec, {
    embedded,
    onSwitch: (e) => post({ k: 'event', id, event: { type: 'sttFallback', ...e } }),
    primaryDeadlineMs: Math.max(1, Math.round(recognizerTimeoutMs * 0.6)),
  });
}

// --- streams -------------------------------------------------------------------------------

interface Stream {
  id: number;
  /** The carrier stream's transport (carrier streams only). */
  carrier: CarrierTransport | null;
  /** The stream's transport: the carrier's, or a LiveKit room's once joined (null while joining). */
  transport: MediaTransport | null;
  /** A LiveKit room stream was hung up while it was still joining. */
  hangupRequested: boolean;
  session: CallMediaSession | null;
  pending: Map<number, (reply: TurnReply) => void>;
  rejects: Map<number, (err: Error) => void>;
  nextReq: number;
}

const streams = new Map<number, Stream>();
let vadEngine: WebRtcVad | null = null;

function toClip(stream: Stream, c: ClipRef): ReplyClip {
  const { encoding, sampleRate } = stream.transport!.outbound;
  const frames = c.file ? clipCache.frames(c.file, encoding, sampleRate) : null;
  return { wav: null, ...(frames ? { frames } : {}), text: c.text, bargeIn: c.bargeIn, asksConfirmation: c.asksConfirmation };
}

function toReply(stream: Stream, reply: ReplyData): TurnReply {
  return { clips: reply.clips.map((c) => toClip(stream, c)), ended: reply.ended, expectation: reply.expectation };
}

function attach(msg: Extract<ToWorker, { k: 'attach' }>): void {
  const { id } = msg;
  const transport = new CarrierTransport(
    msg.dialect,
    {
      send: (text) => sendFrame(id, text),
      close: (code, reason) => post({ k: 'close', id, code, reason }),
    },
    {
      onProtocolError: (error) => post({ k: 'event', id, event: { type: 'protocolError', code: error.code, message: error.message } }),
    },
  );
  const stream = addStream(id, transport);
  for (const f of msg.frames) transport.receive(f);
  if (transport.stopped || !transport.start) {
    // The stream ended (or broke the protocol) within its first frames.
    post({ k: 'ended', id, reason: transport.stopped ?? 'error', cause: null, stats: emptyStreamStats() });
    streams.delete(id);
    return;
  }
  startSession(stream, transport, msg, transport.outbound.minLeadFrames).start(toReply(stream, msg.opening).clips, msg.opening.ended);
}

/** Registers stream `id`: a carrier stream with its transport, or a LiveKit room (`null`: its transport comes once joined). */
function addStream(id: number, carrier: CarrierTransport | null): Stream {
  const stream: Stream = {
    id,
    carrier,
    transport: carrier,
    hangupRequested: false,
    session: null,
    pending: new Map(),
    rejects: new Map(),
    nextReq: 1,
  };
  streams.set(id, stream);
  return stream;
}

/** Room stream `id` could not be joined (or published in): reported, and the stream ends with `error`. */
function roomFailed(id: number, message: string): void {
  streams.delete(id);
  post({ k: 'event', id, event: { type: 'roomFailed', message } });
  post({ k: 'ended', id, reason: 'error', cause: null, stats: emptyStreamStats() });
}

/**
 * Joins the LiveKit room of `msg` (docs/media.md "LiveKit rooms"), publishes vagent's track, waits for the call to
 * be answered, then starts its media session. A room that cannot be joined is reported
 * (`roomFailed`) and the stream ends with `error`.
 */
async function attachRoom(msg: Extract<ToWorker, { k: 'attachRoom' }>): Promise<void> {
  const { id } = msg;
  const stream = addStream(id, null);
  const [{ roomDriver }, { LiveKitRoomTransport: Transport }] = await Promise.all([
    import('../../adapters/livekit/room-connect.js'),
    import('../../adapters/livekit/livekit-transport.js'),
  ]);
  let room;
  try {
    room = await (await roomDriver(data.roomDriver))(msg.join);
  } catch (err) {
    roomFailed(id, (err as Error).message);
    return;
  }
  if (stream.hangupRequested) {
    await room.disconnect();
    streams.delete(id);
    post({ k: 'ended', id, reason: 'hangup', cause: null, stats: emptyStreamStats() });
    return;
  }
  const transport: LiveKitRoomTransport = new Transport(room, {
    sipIdentity: msg.join.sipIdentity,
    onAnswered: () => post({ k: 'event', id, event: { type: 'answered' } }),
  });
  stream.transport = transport;
  try {
    await transport.publish();
  } catch (err) {
    transport.hangup();
    roomFailed(id, `could not publish vagent's audio in room ${msg.join.roomName}: ${(err as Error).message}`);
    return;
  }
  await transport.answered;
  if (transport.ended) {
    // Left before anyone answered (no answer, the caller gave up, hung up from the API).
    streams.delete(id);
    post({ k: 'ended', id, reason: stream.hangupRequested ? 'hangup' : 'caller-hangup', cause: null, stats: emptyStreamStats() });
    return;
  }
  startSession(stream, transport, msg, transport.outbound.minLeadFrames).start(toReply(stream, msg.opening).clips, msg.opening.ended);
}

/**
 * `transport`, recording the call into the file its settings name (docs/media.md "Recordings"),
 * or as it is when the call is not recorded. A recording that cannot be written is reported
 * (`recordingFailed`) and the call goes on unrecorded.
 */
function recorded(id: number, transport: MediaTransport, s: StreamSettings): MediaTransport {
  if (!s.recording) return transport;
  const report = (message: string): void => post({ k: 'event', id, event: { type: 'recordingFailed', message } });
  try {
    return new RecordingTransport(transport, s.recording.channels, new RecordingFile(s.recording.file, report), systemClock);
  } catch (err) {
    report(`the recording could not be started: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    return transport;
  }
}

/** Builds stream `stream`'s media session over `transport` (not started) and wires its events. */
function startSession(
  stream: Stream,
  transport: MediaTransport,
  msg: { settings: StreamSettings; recognizer: RecognizerSpec; opening: ReplyData },
  minLeadFrames: number,
): CallMediaSession {
  const { id } = stream;
  const s = msg.settings;
  const session = new CallMediaSession({
    transport: recorded(id, transport, s),
    vad: vadEngine!.createDetector({ sampleRate: 16000, frameMs: 20 }),
    recognizer: recognizerOf(msg.recognizer, id, s.recognizerTimeoutMs),
    language: s.language,
    turn: (request: TurnRequest) =>
      new Promise<TurnReply>((resolve, reject) => {
        const req = stream.nextReq++;
        stream.pending.set(req, resolve);
        stream.rejects.set(req, reject);
        post({ k: 'turn', id, req, request });
      }),
    // 200 ms of speech by the VAD decides: with the VAD's onset lag and the frames in flight,
    // that is about 250 ms of the caller's speech, and the carrier's clear lands within 300 ms.
    bargeIn: s.bargeIn ? { minSpeechMs: PHONE_BARGE_IN_MIN_SPEECH_MS } : { enabled: false },
    silence: { noSpeechMs: s.noSpeechMs, maxReprompts: s.maxReprompts },
    eouSilence: s.eouSilence,
    expectation: msg.opening.expectation,
    closeGraceMs: s.closeGraceMs,
    recognizerTimeoutMs: s.recognizerTimeoutMs,
    ...(s.maxCallDurationMs !== null ? { maxCallDurationMs: s.maxCallDurationMs } : {}),
    leadFrames: Math.max(2, minLeadFrames + 1),
  });
  stream.session = session;
  session.on('heard', (e) => post({ k: 'event', id, event: { type: 'heard', ...e } }));
  session.on('reply', (e) => post({ k: 'event', id, event: { type: 'reply', text: e.text, cause: e.cause, latencyMs: e.latencyMs } }));
  session.on('bargeIn', (e) =>
    post({
      k: 'event',
      id,
      event: {
        type: 'bargeIn',
        reason: e.reason,
        heard: e.report,
        atMs: e.atMs,
        speechOnsetAtMs: e.speechOnsetAtMs,
        speechMs: e.speechMs,
      },
    }),
  );
  session.on('dtmf', (e) => post({ k: 'event', id, event: { type: 'dtmf', digit: e.digit } }));
  session.on('sttError', (e) => post({ k: 'event', id, event: { type: 'sttError', error: e } }));
  session.on('ended', (e) => {
    const st = session.stats();
    for (const reject of stream.rejects.values()) reject(new Error('the call ended'));
    streams.delete(id);
    post({
      k: 'ended',
      id,
      reason: e.reason,
      cause: e.cause,
      stats: {
        audioInMs: st.audioInMs,
        utterances: st.utterances,
        bargeIns: st.bargeIns,
        latenciesMs: st.latenciesMs,
        framesSent: st.playout.framesSent,
        framesLate: st.playout.framesLate,
        framesDropped: st.playout.framesDropped,
        latenessP99Ms: st.playout.latenessP99Ms,
        latenessMaxMs: st.playout.latenessMaxMs,
        sttAudioMs: st.sttAudioMs,
      },
    });
  });
  return session;
}

function handle(msg: ToWorker): void {
  switch (msg.k) {
    case 'attach':
      attach(msg);
      return;
    case 'attachRoom':
      void attachRoom(msg).catch((err: unknown) => roomFailed(msg.id, (err as Error).message));
      return;
    case 'in': {
      const stream = streams.get(msg.id);
      if (stream?.carrier) for (const f of msg.frames) stream.carrier.receive(f);
      return;
    }
    case 'closed':
      streams.get(msg.id)?.carrier?.closed(msg.code);
      return;
    case 'early': {
      // Only while its turn is still waiting for the reply (docs/media.md "The early clip").
      const stream = streams.get(msg.id);
      if (stream?.session && stream.transport && stream.pending.has(msg.req)) stream.session.playEarly([toClip(stream, msg.clip)]);
      return;
    }
    case 'reply': {
      const stream = streams.get(msg.id);
      if (!stream) return;
      const resolve = stream.pending.get(msg.req);
      const reject = stream.rejects.get(msg.req);
      stream.pending.delete(msg.req);
      stream.rejects.delete(msg.req);
      if (msg.reply) resolve?.(toReply(stream, msg.reply));
      else reject?.(new Error(msg.error ?? 'the turn failed'));
      return;
    }
    case 'hangup': {
      const stream = streams.get(msg.id);
      if (!stream) return;
      stream.hangupRequested = true;
      stream.transport?.hangup();
      return;
    }
    case 'shutdown':
      void (embedded?.close() ?? Promise.resolve()).finally(() => post({ k: 'shutdown' }));
      return;
    case 'warm':
      // A warm-up that fails leaves the first call as cold as before, nothing worse.
      void warmUp.warm(msg).catch(() => post({ k: 'warmed', req: msg.req, files: [], ms: 0 }));
      return;
  }
}

// --- warm-up ahead of the first call (docs/media.md, "The first call after start") ---------

const warmUp = new WorkerWarmUp({
  livekitRooms: data.livekitRooms === true,
  clips: clipCache,
  attach,
  hangup: (id) => handle({ k: 'hangup', id }),
  drop: (id) => streams.delete(id),
  post,
});

port.on('message', (batch: ToWorker[]) => {
  for (const msg of batch) {
    try {
      handle(msg);
    } catch (err) {
      // One stream's fault never takes the others down: that stream ends.
      const id = 'id' in msg ? msg.id : null;
      if (msg.k === 'shutdown') continue;
      if (id !== null) {
        const stream = streams.get(id);
        streams.delete(id);
        post({ k: 'close', id, code: 1011, reason: 'media error' });
        post({ k: 'ended', id, reason: 'error', cause: null, stats: emptyStreamStats() });
        stream?.carrier?.closed(1011);
        if (stream && !stream.carrier) stream.transport?.hangup();
      }
      post({ k: 'event', id: id ?? 0, event: { type: 'protocolError', code: 'internal', message: (err as Error).message } });
    }
  }
});

void (async () => {
  vadEngine = await WebRtcVad.load();
  if (data.livekitRooms)
    await Promise.all([
      import('../../adapters/livekit/room-connect.js').then((m) => m.roomDriver(data.roomDriver).catch(() => undefined)),
      import('../../adapters/livekit/livekit-transport.js'),
    ]);
  loadEmbedded();
  post({ k: 'ready' });
})();

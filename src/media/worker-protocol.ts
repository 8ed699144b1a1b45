/**
 * The messages between the daemon's main thread and its media workers: audio work
 * must never stall the API, so media runs off the daemon's main event loop. The main thread owns
 * the WebSocket (the upgrade, its auth, the carrier's `start` that says which call it is) and
 * the sessions service; a worker owns everything per frame: parsing, decoding, resampling, VAD,
 * recognition, endpointing, paced playout. Messages are plain data (structured clone) and are
 * batched: each side posts at most one array of messages per turn of its event loop.
 */
import type { CarrierDialect } from './carriers/types.js';
import type { ExpectationKind } from './endpointing.js';
import type { BargeInReason } from './barge-in.js';
import type { ClearReport } from './playout-shapes.js';
import type { FakeUtterance } from './fake-recognizer.js';
import type { RecognizerErrorData } from './recognizer.js';
import type { EndCause, TurnRequest } from './call-session-port.js';
import type { StopReason } from './transport.js';

/** How to join a room (plain data: it crosses to the media process). */
export interface RoomJoin {
  /** The LiveKit server's WebSocket URL (`LIVEKIT_URL`, `ws(s)://` or `http(s)://`). */
  url: string;
  /** An access token for this room only (HS256 JWT with `video.roomJoin` and `video.room`). */
  token: string;
  /** The room, e.g. `call-cl_12`. */
  roomName: string;
  /** The phone participant's identity when vagent named it (outbound `sip-cl_<N>`), else null: the first SIP participant. */
  sipIdentity: string | null;
  /** How long joining may take, ms. */
  connectTimeoutMs: number;
}

/** One reply clip as the main thread hands it to a worker: the cached WAV file, not its bytes. */
export interface ClipRef {
  /** Absolute path of the clip's 48 kHz mono PCM16 WAV in the audio cache, or null when it has no audio. */
  file: string | null;
  /** What the clip says (events, logs). */
  text: string;
  /** `false`: caller speech never interrupts it (a legal disclaimer). */
  bargeIn: boolean;
  /** It asks a yes/no question or reads a value back (a bare "yes" then interrupts it). */
  asksConfirmation: boolean;
}

/** A reply as the main thread sends it for a turn request. */
export interface ReplyData {
  clips: ClipRef[];
  /** The conversation is over: play the clips, then hang up. */
  ended: boolean;
  /** What the next step expects (end-of-utterance silence, recogniser grammar). */
  expectation: ExpectationKind;
}

/** Which recogniser a stream uses. */
export type RecognizerSpec =
  /** Scripted transcripts, in order (tests, benchmarks, `vagent call simulate` against a fake). */
  | { kind: 'fake'; script: FakeUtterance[]; delayMs?: number }
  /** Debian's pocketsphinx, in child processes of the worker. */
  | { kind: 'pocketsphinx' }
  /**
   * Deepgram streaming (recognizers/deepgram.ts), wrapped in a fallback recogniser
   * (recognizers/fallback.ts) whose fallback is the embedded one, or none. `apiKey` is a secret:
   * never log a spec.
   */
  | { kind: 'deepgram'; options: { apiKey: string; url?: string; model?: string }; fallback: 'pocketsphinx' | null }
  /** Sarvam AI streaming (recognizers/sarvam.ts), as `deepgram`. */
  | { kind: 'sarvam'; options: { apiKey: string; url?: string; model?: string; mode?: string }; fallback: 'pocketsphinx' | null }
  /** Recognition is off: speech gets the "not heard" path; DTMF still works. */
  | { kind: 'off'; reason: string };

/** A call's recording (docs/media.md "Recordings"): the worker writes the WAV to `file`. */
export interface RecordingSetting {
  /** `mono`: both parties mixed; `dual`: the caller left, the agent right. */
  channels: 'mono' | 'dual';
  /** Absolute path of the WAV in the state dir's `recordings/`. */
  file: string;
}

/** Per-call media settings (the agent's `media:` block after defaults). */
export interface StreamSettings {
  language: string;
  /** Barge-in on (default) or off for the whole call. */
  bargeIn: boolean;
  /** No caller speech for this long after a prompt → re-prompt, ms. */
  noSpeechMs: number;
  /** Silence re-prompts before the polite hang-up. */
  maxReprompts: number;
  /** Longest call, ms; null for none. */
  maxCallDurationMs: number | null;
  /** End-of-utterance silence overrides per expectation, ms. */
  eouSilence: Partial<Record<ExpectationKind, number>>;
  /** Wait after the closing line before hanging up, ms. */
  closeGraceMs: number;
  /** Deadline of the recogniser's final after the end of speech, ms. */
  recognizerTimeoutMs: number;
  /** The call's recording, or null (absent) when it is not recorded. */
  recording?: RecordingSetting | null;
}

/** Main → worker. */
export type ToWorker =
  | {
      k: 'attach';
      /** The stream's id in this daemon. */
      id: number;
      dialect: CarrierDialect;
      /** The frames received so far (`connected`, `start`, any media after), in order. */
      frames: string[];
      settings: StreamSettings;
      recognizer: RecognizerSpec;
      opening: ReplyData;
    }
  /** Join a LiveKit room (docs/media.md "LiveKit rooms") and run the call's media session there once it is answered. */
  | {
      k: 'attachRoom';
      id: number;
      join: RoomJoin;
      settings: StreamSettings;
      recognizer: RecognizerSpec;
      opening: ReplyData;
    }
  /** Frames from the carrier, in order. */
  | { k: 'in'; id: number; frames: string[] }
  /** The WebSocket closed (code from the peer, or 1006). */
  | { k: 'closed'; id: number; code: number }
  /**
   * Turn request `req` is still running, and its reply's first sentence is ready: play `clip` now,
   * before the reply (docs/media.md "The early clip"); the reply then holds the rest.
   */
  | { k: 'early'; id: number; req: number; clip: ClipRef }
  /** The answer to a turn request. */
  | { k: 'reply'; id: number; req: number; reply: ReplyData | null; error?: string }
  /** Hang the call up (the API's hang-up, daemon shutdown). */
  | { k: 'hangup'; id: number }
  /** Stop: end the recogniser's engine processes, then answer `shutdown`. */
  | { k: 'shutdown' }
  /**
   * Warm up ahead of the first call (docs/media.md, "The first call after start"): convert
   * clip files `files` (cached WAVs: the agents' openings) into every outbound format this
   * worker plays, and, once per worker, run a silent stream of each carrier dialect through
   * the whole media path; answer `warmed` with request number `req`.
   */
  | { k: 'warm'; req: number; files: string[] };

/** A media event of one stream, for logs, the CLI and the bench. */
export type StreamEvent =
  | { type: 'heard'; kind: 'partial' | 'final'; text: string; confidence?: number | null; ignored?: boolean }
  | { type: 'reply'; text: string; cause: string; latencyMs: number | null }
  /** `speechMs`: caller speech heard when it decided, stream time (audio), ms. */
  | { type: 'bargeIn'; reason: BargeInReason; heard: ClearReport; atMs: number; speechOnsetAtMs: number; speechMs: number }
  | { type: 'dtmf'; digit: string }
  | { type: 'sttError'; error: RecognizerErrorData }
  /** A cloud recogniser failed on an utterance: `to` took it over (null: none could), `primarySkipped`: for the rest of the call. */
  | { type: 'sttFallback'; from: string; to: string | null; error: RecognizerErrorData; primarySkipped: boolean }
  | { type: 'protocolError'; code: string; message: string }
  /** A LiveKit room call was answered (the phone participant's `sip.callStatus` is `active`). */
  | { type: 'answered' }
  /** vagent could not join (or publish in) the call's LiveKit room; the stream ends with `error`. */
  | { type: 'roomFailed'; message: string }
  /** The call's recording could not be written (docs/media.md "Recordings"); the call goes on unrecorded. */
  | { type: 'recordingFailed'; message: string };

/** Worker → main. */
export type FromWorker =
  /** Text frames to send on stream `id`, in order. */
  | { k: 'out'; id: number; frames: string[] }
  /** Close stream `id`'s socket. */
  | { k: 'close'; id: number; code: number; reason: string }
  /** The media session asks for a turn. */
  | { k: 'turn'; id: number; req: number; request: TurnRequest }
  | { k: 'event'; id: number; event: StreamEvent }
  /** The stream's media session ended; nothing more comes for `id`. */
  | { k: 'ended'; id: number; reason: StopReason; cause: EndCause | null; stats: StreamStats }
  /** The worker is ready (its VAD loaded). */
  | { k: 'ready' }
  /** The worker's child processes are gone; it may be terminated. */
  | { k: 'shutdown' }
  /**
   * Warm-up `req` is done: `files` are those of its files now converted into every outbound
   * format (a file that could not be read is left out), `ms` how long it took.
   */
  | { k: 'warmed'; req: number; files: string[]; ms: number };

/** What a finished stream reports. */
export interface StreamStats {
  audioInMs: number;
  utterances: number;
  bargeIns: number;
  latenciesMs: number[];
  /** Outbound frames sent, and those the playout sent late or dropped. */
  framesSent: number;
  framesLate: number;
  framesDropped: number;
  /** Outbound frame lateness p99 and max, ms. */
  latenessP99Ms: number;
  latenessMaxMs: number;
  /** Recogniser audio sent, ms. */
  sttAudioMs: number;
}

/** The stats of a stream that ended before its media session reported any. */
export function emptyStreamStats(): StreamStats {
  return {
    audioInMs: 0,
    utterances: 0,
    bargeIns: 0,
    latenciesMs: [],
    framesSent: 0,
    framesLate: 0,
    framesDropped: 0,
    latenessP99Ms: 0,
    latenessMaxMs: 0,
    sttAudioMs: 0,
  };
}

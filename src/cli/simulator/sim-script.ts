/**
 * The shapes of a simulated carrier call (src/cli/simulator/sim-client.ts): the caller's script,
 * the client's options, and the timeline and events it records.
 */
import type { PlayoutClock } from '../../media/playout-clock.js';
import type { SimPreparedLine, SimStreamIds } from '../../media/carriers/sim-frames.js';
import type { CarrierAudioFormat, CarrierDialect } from '../../media/carriers/types.js';

/**
 * One step of the caller's script.
 * - `say`: speak `pcm` (mono PCM16 at `sampleRate` Hz, default 16 000), leading and trailing
 *   silence trimmed; or `prepared`, the same line already cut into the stream's frames by
 *   {@link prepareSimLine} (what a benchmark running many calls of the same lines shares: one
 *   conversion instead of one per call; a raw `pcm` is converted when the call is created,
 *   before its socket opens, so never while it streams). By default the caller waits until the bot's reply has finished playing
 *   (the play-out queue empty for the client's `replyQuietMs`), then `afterReplyMs` more
 *   (default 0): the line starts `replyQuietMs + afterReplyMs` after the reply's last sound. With `bargeInAfterMs` the caller starts that many ms after the reply began
 *   playing, talking over it. Without any reply within `replyTimeoutMs` the caller speaks
 *   anyway (a `no_reply` event is recorded).
 * - `dtmf`: press `digits` (`0-9*#A-D`), `gapMs` apart (default 300), after the reply like `say`,
 *   or with `bargeInAfterMs` that many ms after the reply began playing (keys pressed over it).
 * - `wait`: let `ms` pass (silence keeps streaming).
 * - `hangup`: the caller hangs up: `stop` (Twilio, Exotel; default) then close 1000; with
 *   `stop: false` the socket just closes (a stream that stops without `stop`). Plivo never
 *   sends `stop`. At once by default; with `afterReply`, once the bot's reply has finished
 *   playing, as a `say` waits (or after `replyTimeoutMs` without one).
 */
export type SimStep =
  | {
      kind: 'say';
      pcm?: Int16Array;
      sampleRate?: number;
      prepared?: SimPreparedLine;
      text?: string;
      afterReplyMs?: number;
      bargeInAfterMs?: number;
    }
  | { kind: 'dtmf'; digits: string; gapMs?: number; afterReplyMs?: number; bargeInAfterMs?: number }
  | { kind: 'wait'; ms: number }
  | { kind: 'hangup'; stop?: boolean; afterReply?: boolean };

/** Options of {@link simulateCall}. */
export interface SimClientOptions {
  /** The bot's WebSocket URL, `ws://` or `wss://`, e.g. `ws://127.0.0.1:8787/v1/media/twilio`. */
  url: string;
  dialect: CarrierDialect;
  /** Extra upgrade headers, e.g. `{ authorization: 'Bearer vk_…' }` (never recorded). */
  headers?: Record<string, string>;
  /** Custom parameters of the `start` frame (Twilio `customParameters`, Exotel `custom_parameters`, Plivo `extra_headers`). */
  customParameters?: Record<string, string>;
  /** Caller and called numbers, E.164, sent in `start` where the dialect has them (Exotel, Plivo). */
  from?: string;
  to?: string;
  /** The stream's audio format; default μ-law 8 kHz (Twilio, Plivo) or PCM16 LE 8 kHz (Exotel). Twilio accepts only μ-law 8 kHz. */
  format?: CarrierAudioFormat;
  steps: readonly SimStep[];
  /** Time source; default the real monotonic clock. Tests pass a FakeClock. */
  clock?: PlayoutClock;
  /** How long the play-out queue must stay empty for a reply to count as finished, ms (default 400). */
  replyQuietMs?: number;
  /** Longest wait for a reply before the next step goes ahead anyway, ms (default 10 000). */
  replyTimeoutMs?: number;
  /** Longest call, ms (default 120 000): then the caller hangs up and a `timeout` event is recorded. */
  timeoutMs?: number;
  /** Absolute sample value above which PCM counts as speech, for onset/end and trimming (default 500 of 32 767). */
  speechThreshold?: number;
  /** How long to wait for the socket to open, ms (default 10 000). */
  connectTimeoutMs?: number;
}

/** What happened, without its time: see {@link SimEvent}. */
export type SimEventData =
  | { type: 'open' }
  | { type: 'start'; streamId: string; callId: string }
  | { type: 'line_start'; turn: number; text?: string; bargeIn: boolean; overReply: boolean; speechMs: number }
  | { type: 'line_end'; turn: number }
  | { type: 'dtmf'; turn: number; digit: string }
  | { type: 'no_reply'; turn: number; waitedMs: number }
  | { type: 'reply_start'; turn: number; latencyMs: number }
  | { type: 'reply_end'; turn: number; frames: number; audioMs: number }
  | { type: 'mark'; name: string; by: 'played' | 'clear' }
  | { type: 'clear'; droppedMs: number; marksPending: number; bargeInMs?: number; turn?: number }
  | { type: 'protocol_error'; code: string; message: string }
  | { type: 'hangup'; stop: boolean }
  | { type: 'timeout' }
  | { type: 'closed'; code: number; reason: string; by: 'bot' | 'caller' };

/** One thing that happened, `atMs` after the socket opened (monotonic clock, 0.1 ms resolution). */
export type SimEvent = SimEventData & { atMs: number };

/** One caller turn (a line or a DTMF entry) and how the bot answered it. Times in ms since open. */
export interface SimTurn {
  turn: number;
  kind: 'say' | 'dtmf';
  text?: string;
  digits?: string;
  startMs: number;
  /** When the caller's speech (or last key) ended. */
  endMs?: number;
  bargeIn: boolean;
  /** End of speech → first reply frame received, ms. */
  latencyMs?: number;
  /** Caller speech onset (or first key) → `clear` received, ms (a barge-in that the bot honoured). */
  bargeInMs?: number;
  noReply?: boolean;
}

/** Percentiles of a list of ms values. */
export interface SimStats {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** The finished call, plain data. */
export interface SimTimeline {
  dialect: CarrierDialect;
  ids: SimStreamIds;
  format: CarrierAudioFormat;
  events: SimEvent[];
  turns: SimTurn[];
  /** `start` sent → first frame of the opening received, ms. */
  openingMs?: number;
  sent: { frames: number; bytes: number; dtmf: number; maxSendLagMs: number };
  received: {
    frames: number;
    bytes: number;
    audioMs: number;
    /** How late each received frame was for gap-free play-out (0 unless the queue ran dry mid-clip), ms. */
    lateness: SimStats;
    marks: number;
    marksPlayed: number;
    marksCleared: number;
    clears: number;
    protocolErrors: number;
  };
  close: { code: number; reason: string; by: 'bot' | 'caller' };
  durationMs: number;
}

/**
 * What a call's media session ({@link CallMediaSession} in src/media/call-session.ts) exchanges
 * with whoever owns it: the reply clips and turn requests it trades with the session engine, its
 * options, and the events and figures it reports.
 */
import type { ExpectationKind } from './endpointing.js';
import type { BargeInConfig, BargeInReason } from './barge-in.js';
import type { PlayoutClock } from './playout-clock.js';
import type { ClearReport, PlayoutStats } from './playout-shapes.js';
import type { RecognizerErrorData, SpeechRecognizer } from './recognizer.js';
import type { DtmfDigit, MediaTransport, StopReason } from './transport.js';
import type { VoiceActivityDetector } from './vad.js';

/** One reply clip as the engine hands it over. */
export interface ReplyClip {
  /** The clip as a 48 kHz mono PCM16 WAV (src/media/wav.ts, what the clip cache holds), or null when it has no audio (synthesis failed): it is then skipped. */
  wav: Uint8Array | null;
  /**
   * The clip already in the transport's outbound format, one payload per 20 ms frame (what
   * `clipToTelephony` gives): used instead of converting `wav` again (a worker caches them).
   */
  frames?: readonly Uint8Array[];
  /** What the clip says (for events and logs). */
  text: string;
  /** `false`: caller speech never interrupts this clip (legal disclaimers). Default true. */
  bargeIn?: boolean;
  /** The clip asks a yes/no question or reads a value back: a bare "yes"/"haan" then interrupts it (see {@link decideBargeIn}). */
  asksConfirmation?: boolean;
}

/** What the turn port answers. */
export interface TurnReply {
  /** Clips to play, in order (may be empty). */
  clips: ReplyClip[];
  /** The conversation is over: play the clips, then hang up. */
  ended: boolean;
  /** End-of-utterance silence for the caller's next answer, ms (overrides `expectation`). */
  endOfUtteranceSilenceMs?: number;
  /** What the next step expects; picks the end-of-utterance silence from the session's table (see ./endpointing.ts). Default `free`. */
  expectation?: ExpectationKind;
}

/** Speech-recognition telemetry of one turn: the per-turn columns of a turn heard on a call (docs/media.md). */
export interface TurnTelemetry {
  /**
   * The pricing key of the provider that heard the turn (e.g. `pocketsphinx`, `deepgram`, `fake`):
   * the final's own `provider` when a fallback heard it, else the recogniser's; for a failed
   * turn, the provider whose error it was.
   */
  stt_provider: string;
  /** End of speech decided (`speechEnd`, the recogniser's `finish()`) → final transcript, ms on the session clock; 0 when the provider's own endpointing decided (the final is the decision). */
  stt_ms: number;
  /** The final's confidence, 0..1 (0 when it failed); null when the provider gives none (Sarvam). */
  stt_confidence: number | null;
  /** The end-of-utterance silence waited before deciding the caller had finished, ms (by the VAD, or by the provider when it endpointed first: from the VAD's last speech frame to its final). */
  silence_ms: number;
  /** Audio the recogniser consumed for this turn (pre-roll and silence included), ms: the basis of `stt_seconds`. */
  audio_ms: number;
}

/**
 * What the session asks the turn port:
 * - `speech`: the caller said `text`; `heard` is what the caller heard of the reply they interrupted (else null);
 * - `dtmf`: the caller keyed `text` (digits, `*`; the closing `#` removed);
 * - `silence`: no caller speech for the configured time after the prompt; `giveUp` after the last re-prompt (say the fallback and end);
 * - `failed`: the recogniser failed or timed out on the caller's speech; the engine re-prompts;
 * - `max_duration`: the call reached `maxCallDurationMs`: say a closing; the session hangs up after it whatever `ended` says.
 */
export type TurnRequest =
  | { kind: 'speech'; text: string; telemetry: TurnTelemetry; heard: ClearReport | null }
  | { kind: 'dtmf'; text: string; heard: ClearReport | null }
  | { kind: 'silence'; silence: true; attempt: number; giveUp: boolean; silentMs: number }
  | { kind: 'failed'; failed: true; error: RecognizerErrorData; telemetry: TurnTelemetry }
  | { kind: 'max_duration'; elapsedMs: number };

/** Every kind of {@link TurnRequest}, in a fixed order (the session's turn counts). */
export const TURN_KINDS: readonly TurnRequest['kind'][] = ['speech', 'dtmf', 'silence', 'failed', 'max_duration'];

/** The engine's side of a turn; the real one calls the sessions service (through the worker's port). A rejection ends the call (cause `turn_error`). */
export type TurnPort = (request: TurnRequest) => Promise<TurnReply>;

/** Why the session ended the call itself (the transport then reports `hangup`). */
export type EndCause = 'completed' | 'max_duration' | 'turn_error';

/** Options of a {@link CallMediaSession}. */
export interface CallSessionOptions {
  /** The call's audio carrier. The session becomes its listener. */
  transport: MediaTransport;
  /** Voice activity detector for 16 kHz PCM ({@link MEDIA_CORE_SAMPLE_RATE}), owned by the session from now on (closed at the end). */
  vad: VoiceActivityDetector;
  /** Streaming recogniser (chosen per language by `recognizerFor`). */
  recognizer: SpeechRecognizer;
  /** Language of the caller's speech, BCP-47 (RFC 5646). */
  language: string;
  /** The engine's turn. */
  turn: TurnPort;
  /** Clock; default the system clock. */
  clock?: PlayoutClock;
  /** Audio before the detected onset sent to the recogniser, ms, 0–1000; default 300. */
  preRollMs?: number;
  /** Deadline of the recogniser's final after the end of speech, ms, > 0; default 3000. */
  recognizerTimeoutMs?: number;
  /**
   * Barge-in overrides (see `resolveBargeInConfig`); `minSpeechMs` is also the segmenter's
   * minimum speech. Speech over playout that does not interrupt it (a backchannel, a clip with
   * `bargeIn: false`, or barge-in switched off) is not taken as a turn: its final is reported
   * with `ignored: true`.
   */
  bargeIn?: Partial<BargeInConfig>;
  /** Silence overrides `{ noSpeechMs, maxReprompts }` (see `resolveSilenceConfig`). */
  silence?: unknown;
  /** End-of-utterance silence table overrides per expectation (see `resolveEouSilence`). */
  eouSilence?: unknown;
  /** Expectation of the opening's step (end-of-utterance silence and the recogniser's grammar hint); default `free`. */
  expectation?: ExpectationKind;
  /** Pause after the last DTMF key that ends the entry, ms, > 0; default 3000. */
  dtmfTimeoutMs?: number;
  /** Wait after the closing's last mark was acknowledged before hanging up, ms, ≥ 0; default 500. */
  closeGraceMs?: number;
  /** Hang up anyway this long after the closing drained by the schedule when its mark never comes back, ms, > 0; default 3000. */
  markAckTimeoutMs?: number;
  /** Longest call, ms, > 0; default none. */
  maxCallDurationMs?: number;
  /** After `maxCallDurationMs`, the longest the closing may take (turn port, playout, mark, grace) before the session hangs up regardless, ms; default 15000. */
  maxClosingMs?: number;
  /** Frames sent ahead of real time by the playout (see {@link PlayoutOptions}); default 2. */
  leadFrames?: number;
}

/** A transcript event. */
export interface HeardEvent {
  kind: 'partial' | 'final';
  text: string;
  /** The final's confidence (finals only; null when the provider gives none). */
  confidence?: number | null;
  /** True for a final that was not taken as a turn: empty, or speech over playout that did not interrupt it (a backchannel). */
  ignored?: boolean;
}

/** A reply started playing. */
export interface ReplyEvent {
  /** The reply's clip texts joined by spaces. */
  text: string;
  /** What caused it. */
  cause: TurnRequest['kind'] | 'opening';
  /** When its first frame went to the transport, ms on the session clock; null when it had no audio. */
  firstFrameAtMs: number | null;
  /** When the caller's speech it answers really ended (the segmenter's end of speech), ms on the session clock; null unless `cause` is `speech`. */
  endOfSpeechAtMs: number | null;
  /** Response latency `firstFrameAtMs − endOfSpeechAtMs`, ms; null unless both are known. */
  latencyMs: number | null;
}

/** Why the session ended. */
export interface EndedEvent {
  /** The transport's reason. */
  reason: StopReason;
  /** Why the session hung up, when it did. */
  cause: EndCause | null;
}

/** Events of a {@link CallMediaSession}. */
export interface CallSessionEvents {
  heard: [event: HeardEvent];
  reply: [event: ReplyEvent];
  /** Caller speech interrupted playout at `atMs` (session clock, ms); the speech began at `speechOnsetAtMs`; `report` is what the caller heard. */
  bargeIn: [event: { report: ClearReport; reason: BargeInReason; atMs: number; speechOnsetAtMs: number; speechMs: number }];
  dtmf: [event: { digit: DtmfDigit }];
  sttError: [event: RecognizerErrorData];
  ended: [event: EndedEvent];
}

/** Counters of a session. */
export interface CallSessionStats {
  /** Caller audio received, ms. */
  audioInMs: number;
  /** Speech segments detected. */
  utterances: number;
  /** Turn port calls, by request kind. */
  turns: Record<TurnRequest['kind'], number>;
  /** Barge-ins that cleared playout. */
  bargeIns: number;
  /** Recogniser errors and timeouts. */
  sttFailures: number;
  /** Recogniser audio sent, ms (pre-roll and silence included): `stt_seconds` × 1000. */
  sttAudioMs: number;
  /** Reply clips skipped because their WAV could not be read. */
  clipsSkipped: number;
  /** Response latencies of speech turns, ms, in order. */
  latenciesMs: number[];
  /** The playout's counters. */
  playout: PlayoutStats;
}

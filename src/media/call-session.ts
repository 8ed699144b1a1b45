/**
 * The call media session (issue 16, DESIGN.md §3 "Media"): one per live call. It joins the
 * pieces of src/media into a conversation on a phone line:
 *
 *   transport.onAudio (16 kHz PCM) → VAD → {@link SpeechSegmenter} → on `speechStart` a
 *   recognition stream (fed a pre-roll so the first syllable is not lost) → on `speechEnd`
 *   (after the current step's end-of-utterance silence) `finish()` under {@link withTimeout} →
 *   on the final transcript the injected {@link TurnPort} → the reply clips converted to the
 *   transport's outbound format → {@link Playout} (paced, with marks) → the transport.
 *
 * Around that loop: the opening plays at once ({@link CallMediaSession.start}); caller speech
 * during playout interrupts it per {@link decideBargeIn} (the heard report goes to the next turn
 * and to a `bargeIn` event); DTMF keys are collected and sent as one text (`#` ends the entry,
 * or a pause of `dtmfTimeoutMs`); silence after the prompt finished asks the port for a
 * re-prompt ({@link SilenceTimer}); a recogniser error or timeout asks it for a `failed`
 * re-prompt and the call goes on; a final the recogniser marks `endOfUtterance` (the provider's
 * own endpointing) while the stream is still open ends the utterance at once — whichever of the
 * provider and the VAD decides first wins, the other is ignored, never two turns and never none;
 * a reply marked `ended` plays, its last mark is acknowledged,
 * `closeGraceMs` lapse, and the session hangs up; `maxCallDurationMs` asks the port for a
 * closing and then hangs up; the transport's `onStop` ends everything.
 *
 * Pure: no daemon, services or store; every time comes from the injected clock; inputs and
 * outputs are plain data, so a later step runs it in a worker thread. Carriers' playback and
 * mark semantics followed: Twilio Media Streams
 * (https://www.twilio.com/docs/voice/media-streams/websocket-messages), Exotel AgentStream
 * (https://developer.exotel.com/docs/agentstream/stream-voicebot-applet), Plivo Audio Streams
 * (https://www.plivo.com/docs/voice/xml/the-stream-element/checkpoint-event/).
 */
import { EventEmitter } from 'node:events';
import { GRAMMAR_OF_EXPECTATION } from '../domain/media.js';
import { clipToTelephony } from './audio.js';
import { endOfUtteranceSilenceMs, resolveEouSilence, type ExpectationKind } from './endpointing.js';
import { decideBargeIn, resolveBargeInConfig, type BargeInConfig, type BargeInReason } from './barge-in.js';
import { SilenceTimer, type SilenceAction } from './silence-timer.js';
import { Playout, systemClock, type ClearReport, type PlayoutClock } from './playout.js';
import {
  type FinalTranscript,
  type RecognitionStream,
  type RecognizerError,
  type RecognizerErrorData,
  type SpeechRecognizer,
} from './recognizer.js';
import { withTimeout } from './recognition-stream.js';
import { MEDIA_CORE_SAMPLE_RATE, isDtmfDigit, type DtmfDigit, type MediaTransport, type StopReason } from './transport.js';
import { SpeechSegmenter, type SpeechEvent, type VoiceActivityDetector } from './vad.js';
import type {
  CallSessionEvents,
  CallSessionOptions,
  CallSessionStats,
  EndCause,
  ReplyClip,
  ReplyEvent,
  TurnPort,
  TurnReply,
  TurnRequest,
  TurnTelemetry,
} from './call-session-port.js';

/** Invalid options of a {@link CallMediaSession}. */
export class CallSessionError extends RangeError {
  override readonly name = 'CallSessionError';
}

interface Utterance {
  stream: RecognitionStream | null;
  /** Sample index from which the stream has been fed up to `fedTo`. */
  fedTo: number;
  onsetMs: number;
  /** Clock time of the real end of speech. */
  endAtClock: number | null;
  /** Clock time `speechEnd` was handled (the recogniser's `finish()`). */
  decidedAtClock: number | null;
  silenceMs: number;
  partial: string;
  overlapped: boolean;
  interrupted: boolean;
}

interface QueuedMark {
  mark: string;
  clip: ReplyClip;
}

const TURN_KINDS: readonly TurnRequest['kind'][] = ['speech', 'dtmf', 'silence', 'failed', 'max_duration'];

/**
 * One live call's media. Create, then {@link start} with the opening clips. Not re-entrant;
 * all input arrives through the transport listener on one thread. Event listeners must not
 * throw (they run inside the media path).
 */
export class CallMediaSession extends EventEmitter<CallSessionEvents> {
  private readonly transport: MediaTransport;
  private readonly vad: VoiceActivityDetector;
  private readonly recognizer: SpeechRecognizer;
  private readonly language: string;
  private readonly port: TurnPort;
  private readonly clock: PlayoutClock;
  private readonly preRollSamples: number;
  private readonly recognizerTimeoutMs: number;
  private readonly bargeIn: Readonly<BargeInConfig>;
  private readonly eouTable: Readonly<Record<ExpectationKind, number>>;
  private readonly dtmfTimeoutMs: number;
  private readonly closeGraceMs: number;
  private readonly markAckTimeoutMs: number;
  private readonly maxCallDurationMs: number | null;
  private readonly maxClosingMs: number;
  private readonly segmenter: SpeechSegmenter;
  private readonly silence: SilenceTimer;
  private readonly playout: Playout;

  /** Recent caller audio for the pre-roll: chunks with the index of their first sample. */
  private history: { start: number; pcm: Int16Array }[] = [];
  private samplesIn = 0;
  private utterance: Utterance | null = null;
  /** Recognition streams not yet answered (cancelled when the call ends). */
  private readonly streams = new Set<RecognitionStream>();
  private pendingHeard: ClearReport | null = null;
  private queuedMarks: QueuedMark[] = [];
  private dtmfBuffer = '';
  private cancelDtmf: (() => void) | null = null;
  private cancelSilence: (() => void) | null = null;
  private cancelMax: (() => void) | null = null;
  private cancelClose: (() => void) | null = null;
  /** Reply waiting for its first frame to be sent: for the `reply` event. */
  private awaitingFirstFrame: Omit<ReplyEvent, 'firstFrameAtMs' | 'latencyMs'> | null = null;
  private turnChain: Promise<void> = Promise.resolve();
  private turnsInFlight = 0;
  private closing = false;
  private closingMark: string | null = null;
  private endCause: EndCause | null = null;
  private started = false;
  private ended = false;
  private startedAt = 0;
  private turnSeq = 0;
  /** What the current step expects (from the last reply): the recogniser's grammar hint. */
  private expectation: ExpectationKind;
  private readonly counters = { audioInMs: 0, utterances: 0, bargeIns: 0, sttFailures: 0, sttAudioMs: 0, clipsSkipped: 0 };
  private readonly turnCounts: Record<TurnRequest['kind'], number> = Object.fromEntries(TURN_KINDS.map((k) => [k, 0])) as Record<
    TurnRequest['kind'],
    number
  >;
  private readonly latencies: number[] = [];

  /** @throws CallSessionError on an option out of range or a VAD not at 16 kHz */
  constructor(opts: CallSessionOptions) {
    super();
    if (!opts || !opts.transport || !opts.vad || !opts.recognizer || typeof opts.turn !== 'function')
      throw new CallSessionError('a call session needs a transport, a vad, a recognizer and a turn port');
    if (opts.vad.sampleRate !== MEDIA_CORE_SAMPLE_RATE)
      throw new CallSessionError(`the VAD must run at ${MEDIA_CORE_SAMPLE_RATE} Hz (the media core's rate); got ${opts.vad.sampleRate} Hz`);
    const preRollMs = num('preRollMs', opts.preRollMs ?? 300, 0, 1000);
    this.recognizerTimeoutMs = num('recognizerTimeoutMs', opts.recognizerTimeoutMs ?? 3000, 1, 60_000);
    this.dtmfTimeoutMs = num('dtmfTimeoutMs', opts.dtmfTimeoutMs ?? 3000, 1, 60_000);
    this.closeGraceMs = num('closeGraceMs', opts.closeGraceMs ?? 500, 0, 60_000);
    this.markAckTimeoutMs = num('markAckTimeoutMs', opts.markAckTimeoutMs ?? 3000, 1, 60_000);
    this.maxCallDurationMs =
      opts.maxCallDurationMs === undefined ? null : num('maxCallDurationMs', opts.maxCallDurationMs, 1, 24 * 3600_000);
    this.maxClosingMs = num('maxClosingMs', opts.maxClosingMs ?? 15_000, 1, 600_000);
    try {
      this.bargeIn = resolveBargeInConfig(opts.bargeIn ?? {});
      this.eouTable = resolveEouSilence(opts.eouSilence ?? {});
      this.clock = opts.clock ?? systemClock;
      this.silence = new SilenceTimer(this.clock, opts.silence ?? {});
    } catch (err) {
      throw new CallSessionError((err as Error).message);
    }
    this.transport = opts.transport;
    this.vad = opts.vad;
    this.recognizer = opts.recognizer;
    this.language = opts.language;
    this.port = opts.turn;
    this.expectation = opts.expectation ?? 'free';
    this.preRollSamples = Math.round((preRollMs * MEDIA_CORE_SAMPLE_RATE) / 1000);
    this.segmenter = new SpeechSegmenter({
      minSpeechMs: this.bargeIn.minSpeechMs,
      minSilenceMs: endOfUtteranceSilenceMs(opts.expectation ?? 'free', this.eouTable),
      hangoverMs: this.vad.hangoverMs,
    });
    const sink = {
      play: (frame: Uint8Array) => {
        this.transport.play(frame);
        this.firstFrameSent();
      },
      mark: (name: string) => this.transport.mark(name),
      clear: () => this.transport.clear(),
    };
    this.playout = new Playout(sink, {
      frameBytes: this.transport.outbound.frameBytes,
      clock: this.clock,
      leadFrames: opts.leadFrames,
    });
    this.playout.on('started', () => this.silence.promptStarted());
    this.playout.on('drained', () => this.onDrained());
    this.playout.on('clipPlayed', (mark) => this.onClipPlayed(mark));
  }

  /** Whether the call has ended. */
  get isEnded(): boolean {
    return this.ended;
  }

  /**
   * Starts the call: listens to the transport and plays the opening at once (its first frames
   * leave before this returns). Call once, when the stream's `start` arrived.
   * @param opening the opening clips (already synthesised: cache hits)
   * @param ended   the opening is the whole call (a notice): hang up after it
   * @throws CallSessionError when called twice
   */
  start(opening: ReplyClip[], ended = false): void {
    if (this.started) throw new CallSessionError('the call session was already started');
    this.started = true;
    this.startedAt = this.clock.now();
    this.transport.listen({
      onAudio: (pcm) => this.onAudio(pcm),
      onDtmf: (digit) => this.onDtmf(digit),
      onMarkAck: (name) => this.playout.markAcknowledged(name),
      onStop: (reason) => this.finish(reason),
    });
    if (this.maxCallDurationMs !== null) this.cancelMax = this.clock.setTimer(() => this.onMaxDuration(), this.maxCallDurationMs);
    this.playReply({ clips: opening, ended, expectation: this.expectation }, 'opening', null);
  }

  /** A snapshot of the counters. */
  stats(): CallSessionStats {
    return { ...this.counters, turns: { ...this.turnCounts }, latenciesMs: [...this.latencies], playout: this.playout.stats() };
  }

  // -------------------------------------------------------------------------------------------
  // Caller audio → VAD → recogniser
  // -------------------------------------------------------------------------------------------

  private onAudio(pcm: Int16Array): void {
    if (this.ended || !(pcm instanceof Int16Array) || pcm.length === 0) return;
    const start = this.samplesIn;
    this.samplesIn += pcm.length;
    this.counters.audioInMs += (pcm.length * 1000) / MEDIA_CORE_SAMPLE_RATE;
    this.history.push({ start, pcm });
    // Keep the pre-roll plus the segmenter's onset (min speech, gaps) and a margin.
    const keep = this.preRollSamples + (2000 * MEDIA_CORE_SAMPLE_RATE) / 1000;
    while (this.history.length > 1 && this.history[1]!.start <= this.samplesIn - keep) this.history.shift();
    for (const frame of this.vad.push(pcm)) {
      const event = this.segmenter.push(frame);
      if (event) this.onSpeechEvent(event);
      if (this.ended) return;
      this.considerBargeIn();
    }
    this.feedStream();
  }

  /** Clock time of stream time `streamMs` (audio arrives in real time: the newest sample is now). */
  private clockAt(streamMs: number): number {
    return this.clock.now() - ((this.samplesIn * 1000) / MEDIA_CORE_SAMPLE_RATE - streamMs);
  }

  private onSpeechEvent(event: SpeechEvent): void {
    if (event.type === 'speechStart') {
      this.counters.utterances++;
      this.silence.speechStart();
      this.cancelSilenceTimer();
      const u: Utterance = {
        stream: null,
        fedTo: 0,
        onsetMs: event.atMs,
        endAtClock: null,
        decidedAtClock: null,
        silenceMs: 0,
        partial: '',
        overlapped: false,
        interrupted: false,
      };
      this.utterance = u;
      if (this.closing) return; // the closing plays; nothing the caller says changes it
      if (this.dtmfBuffer !== '') return; // keys are being entered: they are the answer, not this sound
      const onsetSample = Math.round((event.atMs * MEDIA_CORE_SAMPLE_RATE) / 1000);
      u.fedTo = Math.max(0, onsetSample - this.preRollSamples, this.history[0]?.start ?? 0);
      try {
        u.stream = withTimeout(
          this.recognizer.start({
            language: this.language,
            sampleRateHz: MEDIA_CORE_SAMPLE_RATE,
            hints: { grammar: GRAMMAR_OF_EXPECTATION[this.expectation] },
          }),
          this.recognizerTimeoutMs,
          this.clock,
          this.recognizer.provider,
        );
      } catch (err) {
        this.sttFailed(u, { kind: 'unavailable', provider: this.recognizer.provider, message: (err as Error).message });
        return;
      }
      u.stream.on('partial', (p) => {
        if (this.ended) return;
        u.partial = p.text;
        this.emit('heard', { kind: 'partial', text: p.text });
        if (this.utterance === u) this.considerBargeIn();
      });
      const stream = u.stream;
      this.streams.add(stream);
      stream.on('final', (f) => {
        this.streams.delete(stream);
        // The provider endpointed before the VAD decided: this final ends the utterance.
        if (f.endOfUtterance === true && u.decidedAtClock === null) this.endedByProvider(u);
        this.onFinal(u, f);
      });
      stream.on('error', (e: RecognizerError) => {
        this.streams.delete(stream);
        this.sttFailed(u, e.toData());
      });
      return;
    }
    const u = this.utterance;
    this.utterance = null;
    if (!u) {
      // Speech whose utterance was dropped (keys pressed, a recogniser failure) ended: with
      // nothing playing or pending, the prompt is waiting for an answer again.
      if (!this.closing && !this.playout.playing && this.turnsInFlight === 0 && this.dtmfBuffer === '') this.startSilenceWait();
      return;
    }
    if (u.decidedAtClock !== null) return;
    u.endAtClock = this.clockAt(event.atMs);
    u.decidedAtClock = this.clock.now(); // when the recogniser is told to finish
    u.silenceMs = event.decidedAtMs - event.atMs;
    if (!u.stream || u.stream.state !== 'open') return;
    this.feedStream(u);
    u.stream.finish();
  }

  /**
   * The recogniser's own endpointing ended utterance `u` (a final marked `endOfUtterance` came
   * while its stream was open, before the VAD's `speechEnd`): whichever says end-of-utterance
   * first wins. The segmenter's speech is cut here, so the VAD's own end of this speech never
   * comes (no second turn) and speech that follows starts a new utterance. The end of speech is
   * the VAD's last speech frame (as for a `speechEnd`), the silence is what the provider waited
   * after it, and `stt_ms` is 0: the transcript came with the decision.
   */
  private endedByProvider(u: Utterance): void {
    const nowMs = (this.samplesIn * 1000) / MEDIA_CORE_SAMPLE_RATE;
    let endMs = nowMs;
    if (this.utterance === u) {
      this.utterance = null;
      const cut = this.segmenter.flush();
      if (cut) endMs = Math.min(nowMs, cut.atMs);
    }
    u.endAtClock = this.clockAt(endMs);
    u.decidedAtClock = this.clock.now();
    u.silenceMs = Math.max(0, nowMs - endMs);
  }

  /** Sends the stream the audio it has not had yet (pre-roll first). */
  private feedStream(u: Utterance | null = this.utterance): void {
    if (!u || !u.stream || u.stream.state !== 'open') return;
    for (const chunk of this.history) {
      const end = chunk.start + chunk.pcm.length;
      if (end <= u.fedTo) continue;
      const part = chunk.pcm.subarray(u.fedTo - chunk.start);
      u.stream.push(part);
      this.counters.sttAudioMs += (part.length * 1000) / MEDIA_CORE_SAMPLE_RATE;
      u.fedTo = end;
    }
  }

  private onFinal(u: Utterance, f: FinalTranscript): void {
    if (this.ended) return;
    const telemetry = this.telemetry(u, f.confidence, f.audioMs, f.provider);
    const ignored = f.text.trim() === '' || (u.overlapped && !u.interrupted) || this.closing;
    this.emit('heard', { kind: 'final', text: f.text, confidence: f.confidence, ...(ignored ? { ignored: true } : {}) });
    if (ignored) {
      // Noise or a backchannel: the prompt is still the one the caller answers.
      if (!this.playout.playing && this.turnsInFlight === 0) this.startSilenceWait();
      return;
    }
    const heard = this.pendingHeard;
    this.pendingHeard = null;
    this.requestTurn({ kind: 'speech', text: f.text, telemetry, heard }, u.endAtClock);
  }

  private sttFailed(u: Utterance, error: RecognizerErrorData): void {
    if (this.ended) return;
    this.counters.sttFailures++;
    this.emit('sttError', error);
    if (this.utterance === u) this.utterance = null;
    if (this.closing || (u.overlapped && !u.interrupted)) return;
    this.requestTurn({ kind: 'failed', failed: true, error, telemetry: this.telemetry(u, 0, 0, error.provider) }, null);
  }

  /** `provider`: who heard (the final's or the error's provider), else the recogniser's own. */
  private telemetry(u: Utterance, confidence: number | null, audioMs: number, provider?: string): TurnTelemetry {
    return {
      stt_provider: provider ?? this.recognizer.provider,
      stt_ms: u.decidedAtClock === null ? 0 : Math.max(0, this.clock.now() - u.decidedAtClock),
      stt_confidence: confidence,
      silence_ms: u.silenceMs,
      audio_ms: audioMs,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Barge-in
  // -------------------------------------------------------------------------------------------

  private considerBargeIn(): void {
    const u = this.utterance;
    if (!u || u.interrupted || this.closing || !this.playout.playing) return;
    u.overlapped = true;
    const nowMs = (this.samplesIn * 1000) / MEDIA_CORE_SAMPLE_RATE;
    const clip = this.queuedMarks[0]?.clip;
    const decision = decideBargeIn(
      {
        playing: true,
        speaking: true,
        speechMs: Math.max(0, nowMs - u.onsetMs),
        partialText: u.partial || undefined,
        partialsExpected: this.recognizer.emitsPartials === true && u.stream !== null && u.stream.state === 'open',
        clip: clip
          ? {
              ...(clip.bargeIn === false ? { barge_in: false } : {}),
              ...(clip.asksConfirmation ? { is_confirm_prompt: true as const } : {}),
            }
          : undefined,
      },
      this.bargeIn,
    );
    if (decision.action !== 'interrupt') return;
    u.interrupted = true;
    this.interrupt(decision.reason, this.clockAt(u.onsetMs), Math.max(0, nowMs - u.onsetMs));
  }

  /**
   * Clears playout (transport `clear` included) and records what was heard. `speechMs`: caller
   * speech the decision heard, in stream time (audio samples, not the clock); 0 for a key press.
   */
  private interrupt(reason: BargeInReason, speechOnsetAtMs: number, speechMs = 0): void {
    const report = this.playout.clear();
    this.queuedMarks = [];
    this.awaitingFirstFrame = null;
    if (!report.cleared) return;
    this.counters.bargeIns++;
    this.pendingHeard = report;
    this.emit('bargeIn', { report, reason, atMs: this.clock.now(), speechOnsetAtMs, speechMs });
  }

  // -------------------------------------------------------------------------------------------
  // DTMF
  // -------------------------------------------------------------------------------------------

  private onDtmf(digit: DtmfDigit): void {
    if (this.ended || !isDtmfDigit(digit)) return;
    this.emit('dtmf', { digit });
    if (this.closing) return;
    this.dropSpeech();
    this.silence.speechStart();
    this.cancelSilenceTimer();
    if (this.playout.playing && this.bargeIn.enabled && this.queuedMarks[0]?.clip.bargeIn !== false)
      this.interrupt('speech', this.clock.now());
    this.cancelDtmfTimer();
    if (digit === '#') {
      this.deliverDtmf();
      return;
    }
    this.dtmfBuffer += digit;
    this.cancelDtmf = this.clock.setTimer(() => {
      this.cancelDtmf = null;
      this.deliverDtmf();
    }, this.dtmfTimeoutMs);
  }

  /**
   * A key was pressed: the caller has turned to the keypad, so speech not yet taken as a turn
   * (an utterance in progress, or one whose final is still awaited) is dropped — a noisy line
   * heard mid-entry would otherwise answer the step, or the readback of the keyed number.
   */
  private dropSpeech(): void {
    const u = this.utterance;
    if (u) {
      u.stream?.cancel();
      this.utterance = null;
    }
    for (const stream of this.streams) stream.cancel();
    this.streams.clear();
  }

  private deliverDtmf(): void {
    const text = this.dtmfBuffer;
    this.dtmfBuffer = '';
    if (text === '' || this.ended) return;
    const heard = this.pendingHeard;
    this.pendingHeard = null;
    this.requestTurn({ kind: 'dtmf', text, heard }, null);
  }

  // -------------------------------------------------------------------------------------------
  // Turns and replies
  // -------------------------------------------------------------------------------------------

  /** Calls the turn port; requests run one at a time, in order. */
  private requestTurn(request: TurnRequest, endOfSpeechAtMs: number | null): void {
    if (this.ended) return;
    this.turnCounts[request.kind]++;
    this.turnsInFlight++;
    this.cancelSilenceTimer();
    const forceEnd = request.kind === 'max_duration' || (request.kind === 'silence' && request.giveUp);
    this.turnChain = this.turnChain
      .then(async () => {
        let reply: TurnReply;
        try {
          if (this.ended) return;
          reply = await this.port(request);
        } catch {
          this.turnsInFlight--;
          this.hangup('turn_error');
          return;
        }
        this.turnsInFlight--;
        if (this.ended) return;
        if (this.closing && request.kind !== 'max_duration') return;
        this.playReply(forceEnd ? { ...reply, ended: true } : reply, request.kind, endOfSpeechAtMs);
      })
      .catch(() => {
        // A malformed reply (e.g. a bad endOfUtteranceSilenceMs): the call cannot go on sensibly.
        this.hangup('turn_error');
      });
  }

  private playReply(reply: TurnReply, cause: ReplyEvent['cause'], endOfSpeechAtMs: number | null): void {
    this.expectation = reply.expectation ?? 'free';
    if (reply.endOfUtteranceSilenceMs !== undefined)
      this.segmenter.setMinSilenceMs(num('endOfUtteranceSilenceMs', reply.endOfUtteranceSilenceMs, 0, 60_000));
    else this.segmenter.setMinSilenceMs(endOfUtteranceSilenceMs(reply.expectation ?? 'free', this.eouTable));
    const seq = ++this.turnSeq;
    const format = { encoding: this.transport.outbound.encoding, sampleRate: this.transport.outbound.sampleRate };
    const clips = Array.isArray(reply.clips) ? reply.clips : [];
    const text = clips.map((c) => c.text).join(' ');
    let lastMark: string | null = null;
    const wasPlaying = this.playout.playing;
    this.awaitingFirstFrame = { text, cause, endOfSpeechAtMs };
    clips.forEach((clip, i) => {
      if (!clip || (!clip.wav && !clip.frames) || this.ended) return;
      let frames: Uint8Array[];
      try {
        frames = clip.frames ? [...clip.frames] : clipToTelephony(clip.wav!, format).map((f) => f.payload);
      } catch {
        this.counters.clipsSkipped++; // not a 48 kHz mono PCM16 WAV: the caller hears the rest
        return;
      }
      if (frames.length === 0) return;
      const mark = `t${seq}c${i + 1}`;
      this.queuedMarks.push({ mark, clip });
      this.playout.enqueue({ frames, mark });
      lastMark = mark;
    });
    if (this.ended) return;
    if (lastMark === null) {
      this.awaitingFirstFrame = null;
      this.emit('reply', { text, cause, firstFrameAtMs: null, endOfSpeechAtMs, latencyMs: null });
      if (!wasPlaying && !this.playout.playing) this.onDrained();
    }
    if (reply.ended) {
      this.closing = true;
      this.closingMark = lastMark;
      this.cancelSilenceTimer();
      this.cancelDtmfTimer();
      if (lastMark === null && !this.playout.playing) this.scheduleHangup(this.closeGraceMs, 'completed');
    }
  }

  private firstFrameSent(): void {
    const pending = this.awaitingFirstFrame;
    if (!pending) return;
    this.awaitingFirstFrame = null;
    const at = this.clock.now();
    const latencyMs = pending.endOfSpeechAtMs === null ? null : at - pending.endOfSpeechAtMs;
    if (latencyMs !== null) this.latencies.push(latencyMs);
    this.emit('reply', { ...pending, firstFrameAtMs: at, latencyMs });
  }

  private onClipPlayed(mark: string): void {
    const i = this.queuedMarks.findIndex((q) => q.mark === mark);
    if (i >= 0) this.queuedMarks.splice(0, i + 1);
    if (this.closing && mark === this.closingMark) this.scheduleHangup(this.closeGraceMs, this.endCause ?? 'completed');
  }

  private onDrained(): void {
    if (this.ended) return;
    if (this.closing) {
      // The closing played by the schedule; its mark should follow. Hang up anyway if it does not.
      if (this.closingMark !== null && !this.cancelClose)
        this.scheduleHangup(this.markAckTimeoutMs + this.closeGraceMs, this.endCause ?? 'completed');
      else if (this.closingMark === null && !this.cancelClose) this.scheduleHangup(this.closeGraceMs, this.endCause ?? 'completed');
      return;
    }
    if (this.turnsInFlight > 0 || this.segmenter.inSpeech) return;
    this.startSilenceWait();
  }

  // -------------------------------------------------------------------------------------------
  // Silence, maximum duration, hang-up, stop
  // -------------------------------------------------------------------------------------------

  private startSilenceWait(): void {
    this.silence.promptFinished();
    this.armSilenceTimer();
  }

  private armSilenceTimer(): void {
    this.cancelSilenceTimer();
    const deadline = this.silence.deadlineMs;
    if (deadline === null || this.ended || this.closing) return;
    this.cancelSilence = this.clock.setTimer(() => {
      this.cancelSilence = null;
      const action: SilenceAction | null = this.silence.tick();
      if (!action) {
        this.armSilenceTimer();
        return;
      }
      if (action.type === 'reprompt')
        this.requestTurn({ kind: 'silence', silence: true, attempt: action.attempt, giveUp: false, silentMs: action.silentMs }, null);
      else
        this.requestTurn({ kind: 'silence', silence: true, attempt: action.reprompts + 1, giveUp: true, silentMs: action.silentMs }, null);
    }, deadline - this.clock.now());
  }

  private onMaxDuration(): void {
    this.cancelMax = null;
    if (this.ended || this.closing) return;
    this.endCause = 'max_duration';
    this.utterance?.stream?.cancel();
    this.utterance = null;
    this.playout.clear();
    this.queuedMarks = [];
    this.awaitingFirstFrame = null;
    this.closing = true; // no more turns from the caller
    this.requestTurn({ kind: 'max_duration', elapsedMs: this.clock.now() - this.startedAt }, null);
    // Whatever the port and the carrier do, the call ends: a closing longer than this is cut.
    this.cancelMax = this.clock.setTimer(() => {
      this.cancelMax = null;
      this.hangup('max_duration');
    }, this.maxClosingMs);
  }

  private scheduleHangup(delayMs: number, cause: EndCause): void {
    this.cancelClose?.();
    this.cancelClose = this.clock.setTimer(() => {
      this.cancelClose = null;
      this.hangup(cause);
    }, delayMs);
  }

  private hangup(cause: EndCause): void {
    if (this.ended) return;
    this.endCause = cause;
    this.transport.hangup();
    // A transport that does not report its own hang-up still ends the session.
    if (!this.ended) this.finish('hangup');
  }

  private finish(reason: StopReason): void {
    if (this.ended) return;
    this.ended = true;
    this.cancelSilenceTimer();
    this.cancelDtmfTimer();
    this.cancelMax?.();
    this.cancelMax = null;
    this.cancelClose?.();
    this.cancelClose = null;
    for (const stream of this.streams) stream.cancel();
    this.streams.clear();
    this.utterance = null;
    this.playout.close();
    this.vad.close();
    this.history = [];
    this.emit('ended', { reason, cause: reason === 'hangup' ? this.endCause : null });
  }

  private cancelSilenceTimer(): void {
    this.cancelSilence?.();
    this.cancelSilence = null;
  }

  private cancelDtmfTimer(): void {
    this.cancelDtmf?.();
    this.cancelDtmf = null;
  }
}

function num(name: string, value: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max)
    throw new CallSessionError(`${name} must be a number of ms in [${min}, ${max}]; got ${String(value)}`);
  return value;
}

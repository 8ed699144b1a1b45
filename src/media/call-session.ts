/**
 * The call media session: one per live call on a phone line (docs/media.md, "How a call behaves").
 * Caller audio → VAD → recognition (`session/listening.ts`) → on a final transcript the injected
 * {@link TurnPort} → the reply's clips paced out with marks (`session/speaking.ts`) → the transport.
 *
 * This class decides what happens between them: the opening plays at once
 * ({@link CallMediaSession.start}); caller speech during playout interrupts it per
 * {@link decideBargeIn} (the heard report goes to the next turn and to a `bargeIn` event); DTMF
 * keys are collected and sent as one text (`session/keypad.ts`); silence after the prompt asks
 * the port for a re-prompt ({@link SilenceTimer}); a recogniser error or timeout asks it for a
 * `failed` re-prompt and the call goes on; a reply marked `ended` plays, its last mark is
 * acknowledged, `closeGraceMs` lapse, and the session hangs up; `maxCallDurationMs` asks the port
 * for a closing and then hangs up; the transport's `onStop` ends everything.
 *
 * Pure: no daemon, services or store; every time comes from the injected clock; inputs and
 * outputs are plain data, so it runs in a worker thread. Carriers' playback and mark semantics
 * followed: Twilio Media Streams (https://www.twilio.com/docs/voice/media-streams/websocket-messages),
 * Exotel AgentStream (https://developer.exotel.com/docs/agentstream/stream-voicebot-applet), Plivo
 * Audio Streams (https://www.plivo.com/docs/voice/xml/the-stream-element/checkpoint-event/).
 */
import { EventEmitter } from 'node:events';
import { endOfUtteranceSilenceMs, type ExpectationKind } from './endpointing.js';
import { decideBargeIn, type BargeInReason } from './barge-in.js';
import type { SilenceAction } from './silence-timer.js';
import type { ClearReport } from './playout-shapes.js';
import type { FinalTranscript, RecognizerErrorData, SpeechRecognizer } from './recognizer.js';
import { speechBargeInInput } from './session/barge-in-input.js';
import { KeypadEntry } from './session/keypad.js';
import { CallerListening, type Utterance } from './session/listening.js';
import { CallSessionError, msInRange, resolveSessionSettings, type SessionSettings } from './session/options.js';
import { ReplySpeaking } from './session/speaking.js';
import { isDtmfDigit, type DtmfDigit, type MediaTransport, type StopReason } from './transport.js';
import {
  TURN_KINDS,
  type CallSessionEvents,
  type CallSessionOptions,
  type CallSessionStats,
  type EndCause,
  type ReplyClip,
  type ReplyEvent,
  type TurnPort,
  type TurnReply,
  type TurnRequest,
} from './call-session-port.js';

/**
 * One live call's media. Create, then {@link start} with the opening clips. Not re-entrant;
 * all input arrives through the transport listener on one thread. Event listeners must not
 * throw (they run inside the media path).
 */
export class CallMediaSession extends EventEmitter<CallSessionEvents> {
  private readonly transport: MediaTransport;
  private readonly recognizer: SpeechRecognizer;
  private readonly port: TurnPort;
  private readonly cfg: SessionSettings;
  private readonly clock: SessionSettings['clock'];
  private readonly silence: SessionSettings['silence'];
  private readonly listening: CallerListening;
  private readonly speaking: ReplySpeaking;
  private pendingHeard: ClearReport | null = null;
  private readonly keypad: KeypadEntry;
  private cancelSilence: (() => void) | null = null;
  private cancelMax: (() => void) | null = null;
  private cancelClose: (() => void) | null = null;
  private turnChain: Promise<void> = Promise.resolve();
  private turnsInFlight = 0;
  /** The turn the port is answering now: its cause, its caller's end of speech, and its early clip. */
  private current: { cause: TurnRequest['kind']; endOfSpeechAtMs: number | null; early: boolean; interrupted: boolean } | null = null;
  private closing = false;
  private closingMark: string | null = null;
  private endCause: EndCause | null = null;
  private started = false;
  private ended = false;
  private startedAt = 0;
  /** What the current step expects (from the last reply): the recogniser's grammar hint. */
  private expectation: ExpectationKind;
  private readonly counters = { audioInMs: 0, utterances: 0, bargeIns: 0, sttFailures: 0, sttAudioMs: 0, clipsSkipped: 0 };
  private readonly turnCounts = Object.fromEntries(TURN_KINDS.map((k) => [k, 0])) as Record<TurnRequest['kind'], number>;

  /** @throws CallSessionError on an option out of range or a VAD not at 16 kHz */
  constructor(opts: CallSessionOptions) {
    super();
    this.cfg = resolveSessionSettings(opts);
    this.clock = this.cfg.clock;
    this.silence = this.cfg.silence;
    this.transport = opts.transport;
    this.recognizer = opts.recognizer;
    this.port = opts.turn;
    this.expectation = opts.expectation ?? 'free';
    this.keypad = new KeypadEntry(this.clock, this.cfg.dtmfTimeoutMs, (keys) => this.deliverDtmf(keys));
    this.listening = new CallerListening(
      {
        vad: opts.vad,
        recognizer: opts.recognizer,
        language: opts.language,
        recognizerTimeoutMs: this.cfg.recognizerTimeoutMs,
        preRollSamples: this.cfg.preRollSamples,
        clock: this.clock,
        minSpeechMs: this.cfg.bargeIn.minSpeechMs,
        minSilenceMs: endOfUtteranceSilenceMs(opts.expectation ?? 'free', this.cfg.eouTable),
      },
      {
        ended: () => this.ended,
        speechStarted: () => {
          this.silence.speechStart();
          this.cancelSilenceTimer();
        },
        // The closing plays (nothing the caller says changes it), or keys are being entered
        // (they are the answer, not this sound).
        acceptsSpeech: () => !this.closing && !this.keypad.entering,
        expectation: () => this.expectation,
        droppedSpeechEnded: () => this.droppedSpeechEnded(),
        partial: (text) => this.emit('heard', { kind: 'partial', text }),
        considerBargeIn: () => this.considerBargeIn(),
        final: (u, f) => this.onFinal(u, f),
        failed: (u, error) => this.sttFailed(u, error),
      },
      this.counters,
    );
    this.speaking = new ReplySpeaking(
      this.transport,
      this.clock,
      opts.leadFrames,
      {
        ended: () => this.ended,
        promptStarted: () => this.silence.promptStarted(),
        drained: () => this.onDrained(),
        clipPlayed: (mark) => {
          if (this.closing && mark === this.closingMark) this.scheduleHangup(this.cfg.closeGraceMs, this.endCause ?? 'completed');
        },
        reply: (event) => this.emit('reply', event),
      },
      this.counters,
    );
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
      onAudio: (pcm) => this.listening.push(pcm),
      onDtmf: (digit) => this.onDtmf(digit),
      onMarkAck: (name) => this.speaking.markAcknowledged(name),
      onStop: (reason) => this.finish(reason),
    });
    if (this.cfg.maxCallDurationMs !== null) this.cancelMax = this.clock.setTimer(() => this.onMaxDuration(), this.cfg.maxCallDurationMs);
    this.playReply({ clips: opening, ended, expectation: this.expectation }, 'opening', null);
  }

  /**
   * Plays `clips` ahead of the reply of the turn the port is answering (docs/media.md "The early
   * clip"): its first frame is the turn's response, the reply is queued behind it, and a barge-in
   * during it drops that reply unless it ends the call. Ignored with no turn running, closing, or ended.
   */
  playEarly(clips: ReplyClip[]): void {
    const turn = this.current;
    if (this.ended || this.closing || turn === null || turn.cause === 'max_duration') return;
    if (this.speaking.play(clips, turn.cause, turn.early ? null : turn.endOfSpeechAtMs) !== null) turn.early = true;
  }

  /** A snapshot of the counters. */
  stats(): CallSessionStats {
    return { ...this.counters, turns: { ...this.turnCounts }, latenciesMs: [...this.speaking.latencies], playout: this.speaking.stats() };
  }

  // ---- What the caller said ----

  /** Dropped speech (keys pressed, a recogniser failure) ended: with nothing playing or pending, the prompt waits again. */
  private droppedSpeechEnded(): void {
    if (!this.closing && !this.speaking.playing && this.turnsInFlight === 0 && !this.keypad.entering) this.startSilenceWait();
  }

  private onFinal(u: Utterance, f: FinalTranscript): void {
    if (this.ended) return;
    const telemetry = this.listening.telemetry(u, f.confidence, f.audioMs, f.provider);
    const ignored = f.text.trim() === '' || (u.overlapped && !u.interrupted) || this.closing;
    this.emit('heard', { kind: 'final', text: f.text, confidence: f.confidence, ...(ignored ? { ignored: true } : {}) });
    if (ignored) {
      // Noise or a backchannel: the prompt is still the one the caller answers.
      if (!this.speaking.playing && this.turnsInFlight === 0) this.startSilenceWait();
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
    this.listening.release(u);
    if (this.closing || (u.overlapped && !u.interrupted)) return;
    this.requestTurn({ kind: 'failed', failed: true, error, telemetry: this.listening.telemetry(u, 0, 0, error.provider) }, null);
  }

  // ---- Barge-in ----

  private considerBargeIn(): void {
    const u = this.listening.utterance;
    if (!u || u.interrupted || this.closing || !this.speaking.playing) return;
    u.overlapped = true;
    const nowMs = this.listening.nowMs;
    const emitsPartials = this.recognizer.emitsPartials === true;
    const decision = decideBargeIn(speechBargeInInput(u, nowMs, this.speaking.currentClip, emitsPartials), this.cfg.bargeIn);
    if (decision.action !== 'interrupt') return;
    u.interrupted = true;
    this.interrupt(decision.reason, this.listening.clockAt(u.onsetMs), Math.max(0, nowMs - u.onsetMs));
  }

  /** Clears playout (transport `clear` too) and records what was heard; `speechMs` in stream time, 0 for a key press. */
  private interrupt(reason: BargeInReason, speechOnsetAtMs: number, speechMs = 0): void {
    const report = this.speaking.clear();
    if (!report.cleared) return;
    if (this.current?.early) this.current.interrupted = true;
    this.counters.bargeIns++;
    this.pendingHeard = report;
    this.emit('bargeIn', { report, reason, atMs: this.clock.now(), speechOnsetAtMs, speechMs });
  }

  // ---- DTMF ----

  private onDtmf(digit: DtmfDigit): void {
    if (this.ended || !isDtmfDigit(digit)) return;
    this.emit('dtmf', { digit });
    if (this.closing) return;
    // The caller has turned to the keypad: speech not yet taken as a turn is dropped, or a noisy
    // line heard mid-entry would answer the step, or the readback of the keyed number.
    this.listening.dropSpeech();
    this.silence.speechStart();
    this.cancelSilenceTimer();
    if (this.speaking.playing && this.cfg.bargeIn.enabled && this.speaking.currentClip?.bargeIn !== false)
      this.interrupt('speech', this.clock.now());
    this.keypad.press(digit);
  }

  private deliverDtmf(text: string): void {
    if (this.ended) return;
    const heard = this.pendingHeard;
    this.pendingHeard = null;
    this.requestTurn({ kind: 'dtmf', text, heard }, null);
  }

  // ---- Turns and replies ----

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
          this.current = { cause: request.kind, endOfSpeechAtMs, early: false, interrupted: false };
          reply = await this.port(request);
        } catch {
          this.turnsInFlight--;
          this.current = null;
          this.hangup('turn_error');
          return;
        }
        this.turnsInFlight--;
        const turn = this.current;
        this.current = null;
        if (this.ended) return;
        if (this.closing && request.kind !== 'max_duration') return;
        const ended = forceEnd || reply.ended;
        // After an early clip, its first frame was the response; one the caller interrupted takes the rest with it.
        const cut = turn?.interrupted === true && !ended;
        const shown = { ...reply, ended, ...(cut ? { clips: [] } : {}) };
        this.playReply(shown, request.kind, turn?.early ? null : endOfSpeechAtMs);
      })
      .catch(() => {
        // A malformed reply (e.g. a bad endOfUtteranceSilenceMs): the call cannot go on sensibly.
        this.hangup('turn_error');
      });
  }

  private playReply(reply: TurnReply, cause: ReplyEvent['cause'], endOfSpeechAtMs: number | null): void {
    this.expectation = reply.expectation ?? 'free';
    if (reply.endOfUtteranceSilenceMs !== undefined)
      this.listening.segmenter.setMinSilenceMs(msInRange('endOfUtteranceSilenceMs', reply.endOfUtteranceSilenceMs, 0, 60_000));
    else this.listening.segmenter.setMinSilenceMs(endOfUtteranceSilenceMs(reply.expectation ?? 'free', this.cfg.eouTable));
    const clips = Array.isArray(reply.clips) ? reply.clips : [];
    const lastMark = this.speaking.play(clips, cause, endOfSpeechAtMs);
    if (lastMark === undefined) return;
    if (reply.ended) {
      this.closing = true;
      this.closingMark = lastMark;
      this.cancelSilenceTimer();
      this.keypad.stopTimer();
      if (lastMark === null && !this.speaking.playing) this.scheduleHangup(this.cfg.closeGraceMs, 'completed');
    }
  }

  private onDrained(): void {
    if (this.ended) return;
    if (this.closing) {
      // The closing played by the schedule; its mark should follow. Hang up anyway if it does not.
      if (this.closingMark !== null && !this.cancelClose)
        this.scheduleHangup(this.cfg.markAckTimeoutMs + this.cfg.closeGraceMs, this.endCause ?? 'completed');
      else if (this.closingMark === null && !this.cancelClose) this.scheduleHangup(this.cfg.closeGraceMs, this.endCause ?? 'completed');
      return;
    }
    if (this.turnsInFlight > 0 || this.listening.segmenter.inSpeech) return;
    this.startSilenceWait();
  }

  // ---- Silence, maximum duration, hang-up, stop ----

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
      const giveUp = action.type !== 'reprompt';
      const attempt = action.type === 'reprompt' ? action.attempt : action.reprompts + 1;
      this.requestTurn({ kind: 'silence', silence: true, attempt, giveUp, silentMs: action.silentMs }, null);
    }, deadline - this.clock.now());
  }

  private onMaxDuration(): void {
    this.cancelMax = null;
    if (this.ended || this.closing) return;
    this.endCause = 'max_duration';
    this.listening.cancelUtterance();
    this.speaking.clear();
    this.closing = true; // no more turns from the caller
    this.requestTurn({ kind: 'max_duration', elapsedMs: this.clock.now() - this.startedAt }, null);
    // Whatever the port and the carrier do, the call ends: a closing longer than this is cut.
    this.cancelMax = this.clock.setTimer(() => {
      this.cancelMax = null;
      this.hangup('max_duration');
    }, this.cfg.maxClosingMs);
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
    this.keypad.stopTimer();
    this.cancelMax?.();
    this.cancelMax = null;
    this.cancelClose?.();
    this.cancelClose = null;
    this.listening.stop();
    this.speaking.close();
    this.listening.close();
    this.emit('ended', { reason, cause: reason === 'hangup' ? this.endCause : null });
  }

  private cancelSilenceTimer(): void {
    this.cancelSilence?.();
    this.cancelSilence = null;
  }
}

/**
 * The listening half of a {@link CallMediaSession}: the caller's audio (16 kHz PCM) through the
 * VAD and the {@link SpeechSegmenter} into utterances, each with a recognition stream opened on
 * `speechStart` (fed a pre-roll so the first syllable is not lost) and told to `finish()` on
 * `speechEnd`, under {@link withTimeout}. A final the recogniser marks `endOfUtterance` while its
 * stream is still open ends the utterance at once: whichever of the provider and the VAD decides
 * first wins, the other is ignored.
 *
 * What an utterance becomes (a turn, a barge-in, nothing) is the session's: it is told through
 * the {@link ListeningHost} it passes in.
 */
import { GRAMMAR_OF_EXPECTATION } from '../../domain/media.js';
import type { TurnTelemetry } from '../call-session-port.js';
import type { ExpectationKind } from '../endpointing.js';
import type { PlayoutClock } from '../playout-clock.js';
import {
  type FinalTranscript,
  type RecognitionStream,
  type RecognizerError,
  type RecognizerErrorData,
  type SpeechRecognizer,
} from '../recognizer.js';
import { withTimeout } from '../recognition-stream.js';
import { MEDIA_CORE_SAMPLE_RATE } from '../transport.js';
import { SpeechSegmenter, type SpeechEvent, type VoiceActivityDetector } from '../vad.js';

/** One stretch of caller speech, from the segmenter's `speechStart`. */
export interface Utterance {
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

/** What the session tells the listening half, and is told by it. */
export interface ListeningHost {
  /** True once the call has ended. */
  ended(): boolean;
  /** Caller speech began (the silence wait stops). */
  speechStarted(): void;
  /** False while the closing plays or keys are being entered: the new utterance is not recognised. */
  acceptsSpeech(): boolean;
  /** What the current step expects: the recogniser's grammar hint. */
  expectation(): ExpectationKind;
  /** Speech whose utterance had been dropped ended. */
  droppedSpeechEnded(): void;
  /** A partial transcript of an utterance. */
  partial(text: string): void;
  /** The caller is speaking (after each VAD frame, and on a partial of the current utterance). */
  considerBargeIn(): void;
  /** The final transcript of utterance `u`. */
  final(u: Utterance, f: FinalTranscript): void;
  /** Utterance `u`'s recognition failed. */
  failed(u: Utterance, error: RecognizerErrorData): void;
}

/** The fixed settings of the listening half. */
export interface ListeningOptions {
  vad: VoiceActivityDetector;
  recognizer: SpeechRecognizer;
  language: string;
  recognizerTimeoutMs: number;
  /** Audio before the onset fed to a new stream, samples at 16 kHz. */
  preRollSamples: number;
  clock: PlayoutClock;
  /** The segmenter's shortest speech, ms. */
  minSpeechMs: number;
  /** The segmenter's end-of-utterance silence at the start, ms. */
  minSilenceMs: number;
}

/** The session's counters the listening half keeps up to date. */
export interface ListeningCounters {
  audioInMs: number;
  utterances: number;
  sttAudioMs: number;
}

/** Caller audio → VAD → utterances → recognition streams (see the module comment). */
export class CallerListening {
  /** The utterance being heard (null between utterances, or once dropped). */
  utterance: Utterance | null = null;
  /** Cuts the VAD's frames into utterances; its end-of-utterance silence follows the step. */
  readonly segmenter: SpeechSegmenter;
  /** Recent caller audio for the pre-roll: chunks with the index of their first sample. */
  private history: { start: number; pcm: Int16Array }[] = [];
  private samplesIn = 0;
  /** Recognition streams not yet answered (cancelled when the call ends). */
  private readonly streams = new Set<RecognitionStream>();

  constructor(
    private readonly opts: ListeningOptions,
    private readonly host: ListeningHost,
    private readonly counters: ListeningCounters,
  ) {
    this.segmenter = new SpeechSegmenter({
      minSpeechMs: opts.minSpeechMs,
      minSilenceMs: opts.minSilenceMs,
      hangoverMs: opts.vad.hangoverMs,
    });
  }

  /** Stream time of the newest caller sample, ms. */
  get nowMs(): number {
    return (this.samplesIn * 1000) / MEDIA_CORE_SAMPLE_RATE;
  }

  /** Caller audio from the transport. */
  push(pcm: Int16Array): void {
    if (this.host.ended() || !(pcm instanceof Int16Array) || pcm.length === 0) return;
    const start = this.samplesIn;
    this.samplesIn += pcm.length;
    this.counters.audioInMs += (pcm.length * 1000) / MEDIA_CORE_SAMPLE_RATE;
    this.history.push({ start, pcm });
    // Keep the pre-roll plus the segmenter's onset (min speech, gaps) and a margin.
    const keep = this.opts.preRollSamples + (2000 * MEDIA_CORE_SAMPLE_RATE) / 1000;
    while (this.history.length > 1 && this.history[1]!.start <= this.samplesIn - keep) this.history.shift();
    for (const frame of this.opts.vad.push(pcm)) {
      const event = this.segmenter.push(frame);
      if (event) this.onSpeechEvent(event);
      if (this.host.ended()) return;
      this.host.considerBargeIn();
    }
    this.feed();
  }

  /** Clock time of stream time `streamMs` (audio arrives in real time: the newest sample is now). */
  clockAt(streamMs: number): number {
    return this.opts.clock.now() - (this.nowMs - streamMs);
  }

  /** Forgets utterance `u` when it is the current one (its recognition failed). */
  release(u: Utterance): void {
    if (this.utterance === u) this.utterance = null;
  }

  /** Cancels the current utterance's stream and forgets it. */
  cancelUtterance(): void {
    this.utterance?.stream?.cancel();
    this.utterance = null;
  }

  /**
   * Drops speech not yet taken as a turn: the utterance in progress and every stream whose
   * final is still awaited (a key was pressed).
   */
  dropSpeech(): void {
    this.cancelUtterance();
    for (const stream of this.streams) stream.cancel();
    this.streams.clear();
  }

  /** Cancels every stream still open and forgets the utterance (the call ended). */
  stop(): void {
    for (const stream of this.streams) stream.cancel();
    this.streams.clear();
    this.utterance = null;
  }

  /** Closes the VAD and lets the audio go (the call ended). */
  close(): void {
    this.opts.vad.close();
    this.history = [];
  }

  /** `provider`: who heard (the final's or the error's provider), else the recogniser's own. */
  telemetry(u: Utterance, confidence: number | null, audioMs: number, provider?: string): TurnTelemetry {
    return {
      stt_provider: provider ?? this.opts.recognizer.provider,
      stt_ms: u.decidedAtClock === null ? 0 : Math.max(0, this.opts.clock.now() - u.decidedAtClock),
      stt_confidence: confidence,
      silence_ms: u.silenceMs,
      audio_ms: audioMs,
    };
  }

  private onSpeechEvent(event: SpeechEvent): void {
    if (event.type === 'speechStart') {
      this.counters.utterances++;
      this.host.speechStarted();
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
      if (!this.host.acceptsSpeech()) return;
      this.open(u, event.atMs);
      return;
    }
    const u = this.utterance;
    this.utterance = null;
    if (!u) {
      this.host.droppedSpeechEnded();
      return;
    }
    if (u.decidedAtClock !== null) return;
    u.endAtClock = this.clockAt(event.atMs);
    u.decidedAtClock = this.opts.clock.now(); // when the recogniser is told to finish
    u.silenceMs = event.decidedAtMs - event.atMs;
    if (!u.stream || u.stream.state !== 'open') return;
    this.feed(u);
    u.stream.finish();
  }

  /** Opens utterance `u`'s recognition stream (speech began at stream time `onsetMs`). */
  private open(u: Utterance, onsetMs: number): void {
    const { recognizer } = this.opts;
    const onsetSample = Math.round((onsetMs * MEDIA_CORE_SAMPLE_RATE) / 1000);
    u.fedTo = Math.max(0, onsetSample - this.opts.preRollSamples, this.history[0]?.start ?? 0);
    try {
      u.stream = withTimeout(
        recognizer.start({
          language: this.opts.language,
          sampleRateHz: MEDIA_CORE_SAMPLE_RATE,
          hints: { grammar: GRAMMAR_OF_EXPECTATION[this.host.expectation()] },
        }),
        this.opts.recognizerTimeoutMs,
        this.opts.clock,
        recognizer.provider,
      );
    } catch (err) {
      this.host.failed(u, { kind: 'unavailable', provider: recognizer.provider, message: (err as Error).message });
      return;
    }
    u.stream.on('partial', (p) => {
      if (this.host.ended()) return;
      u.partial = p.text;
      this.host.partial(p.text);
      if (this.utterance === u) this.host.considerBargeIn();
    });
    const stream = u.stream;
    this.streams.add(stream);
    stream.on('final', (f) => {
      this.streams.delete(stream);
      // The provider endpointed before the VAD decided: this final ends the utterance.
      if (f.endOfUtterance === true && u.decidedAtClock === null) this.endedByProvider(u);
      this.host.final(u, f);
    });
    stream.on('error', (e: RecognizerError) => {
      this.streams.delete(stream);
      this.host.failed(u, e.toData());
    });
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
    const nowMs = this.nowMs;
    let endMs = nowMs;
    if (this.utterance === u) {
      this.utterance = null;
      const cut = this.segmenter.flush();
      if (cut) endMs = Math.min(nowMs, cut.atMs);
    }
    u.endAtClock = this.clockAt(endMs);
    u.decidedAtClock = this.opts.clock.now();
    u.silenceMs = Math.max(0, nowMs - endMs);
  }

  /** Sends the stream the audio it has not had yet (pre-roll first). */
  private feed(u: Utterance | null = this.utterance): void {
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
}

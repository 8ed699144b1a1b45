/**
 * One Deepgram recognition stream: its socket (./deepgram-protocol.ts for what goes on the wire),
 * the utterance's audio, and the state that turns Deepgram's answers into the port's `partial`,
 * `final` and `error` events.
 *
 * A stream: audio pushed before the socket opens is buffered, and all audio of the utterance
 * is kept until the stream ends. Interims become `partial`s (the settled segments so far plus
 * the interim). The one `final` comes either from Deepgram's endpointing — `speech_final` or
 * `UtteranceEnd` with words heard, before `finish()` — marked `endOfUtterance` (the stream is
 * then `done`; a later `finish()` does nothing), or after `finish()`, which sends `Finalize`
 * and, at once after it, `CloseStream`: the final is delivered on the `from_finalize` result,
 * or — since Deepgram does not promise one when little audio is buffered — on the `Metadata`
 * or the clean close that answer `CloseStream`. Its text is the settled segments joined; its
 * confidence the mean of Deepgram's `alternatives[0].confidence` of each, or null when one came
 * without it. Times are stream times from the samples pushed: a final covers
 * [0, all audio pushed].
 *
 * Failures: a socket that drops, errors or closes uncleanly before the final, a handshake that
 * times out (`connectTimeoutMs`) or answers 5xx, or an unreachable host, is retried once on a
 * new socket that replays all the utterance's audio from its start (Deepgram's times restart
 * with it, so they stay stream times); a second failure is an `error` (`crashed` for a drop,
 * `timeout`, or `unavailable`). 429 is retried once after `RATE_LIMIT_RETRY_MS` (./deepgram-protocol.ts); 401/403
 * and 400 are `unavailable` at once. Messages never hold the API key. Anything after the final
 * is ignored. Note that Deepgram bills the replayed audio again; `audioMs` counts it once.
 */
import os from 'node:os';
import WebSocket, { type RawData } from 'ws';
import { redactSecrets } from '../../domain/redact.js';
import type { ConnectFailure } from './cloud-socket.js';
import { DEEPGRAM_PROVIDER, deepgramListenUrl, deepgramRefusal } from './deepgram-protocol.js';
import {
  RecognizerError,
  type FinalTranscript,
  type RecognitionOptions,
  type RecognitionState,
  type RecognizerClock,
} from '../../media/recognizer.js';
import { BaseRecognitionStream } from '../../media/recognition-stream.js';

/** How long to wait for Deepgram to close after `CloseStream` before dropping the socket, ms. */
const CLOSE_GRACE_MS = 5000;

/** What a stream needs of its recogniser's options (all but the key and the languages; see `DeepgramOptions`). */
export interface DeepgramStreamSettings {
  /** The streaming endpoint, `ws:` or `wss:`. */
  url: string;
  /** Model, e.g. `nova-3`. */
  model: string;
  /** Deepgram's endpointing silence, ms. */
  endpointingMs: number;
  /** Gap that sends `UtteranceEnd`, ms. */
  utteranceEndMs: number;
  /** Deadline of the WebSocket handshake, ms. */
  connectTimeoutMs: number;
  /** Idle time after which a `KeepAlive` is sent, ms. */
  keepAliveMs: number;
  /** Clock for the handshake deadline, KeepAlive and the 429 retry. */
  clock: RecognizerClock;
}

/** A settled segment (`is_final` result) of the current socket. */
interface Segment {
  text: string;
  /** `alternatives[0].confidence`, or null when Deepgram sent none (or one outside 0..1). */
  confidence: number | null;
}

/** A Deepgram recognition stream: one socket at a time, retried once (see the module doc). */
export class DeepgramStream extends BaseRecognitionStream {
  private readonly clock: RecognizerClock;
  /** All audio pushed, as sent (little-endian PCM16). */
  private readonly audio: Buffer[] = [];
  private samples = 0;
  /** Socket generation: events of older sockets are ignored. */
  private gen = 0;
  /** The socket, in a private field: during the handshake its request holds the key. */
  #ws: WebSocket | null = null;
  readonly #apiKey: string;
  private open = false;
  private failures = 0;
  private segments: Segment[] = [];
  private interim = '';
  private lastPartial = '';
  private closeSent = false;
  private lastSentAt = 0;
  private readonly url: string;
  private stopConnectTimer: (() => void) | undefined;
  private stopKeepAlive: (() => void) | undefined;
  private stopRetry: (() => void) | undefined;

  constructor(
    private readonly settings: DeepgramStreamSettings,
    apiKey: string,
    readonly options: Readonly<RecognitionOptions>,
  ) {
    super();
    this.#apiKey = apiKey;
    this.clock = settings.clock;
    this.url = deepgramListenUrl(settings.url, settings, options);
    this.connect();
  }

  /** Audio after a `failed` stream or an endpointed final (`done`) is ignored (it was in flight). */
  protected override readonly ignoreAudioIn: ReadonlySet<RecognitionState> = new Set(['failed', 'done']);

  protected accept(pcm: Int16Array): void {
    if (pcm.length === 0) return; // an empty frame makes Deepgram close the socket
    const bytes = Buffer.from(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
    if (os.endianness() === 'BE') bytes.swap16();
    this.audio.push(bytes);
    this.samples += pcm.length;
    if (this.open) this.sendAudio(bytes);
  }

  protected onFinish(): void {
    if (this.open) this.sendFinish();
  }

  cancel(): void {
    if (this.current === 'cancelled' || this.current === 'done') return;
    this.current = 'cancelled';
    this.audio.length = 0;
    this.gen++;
    this.stopTimers();
    this.stopRetry?.();
    this.dispose(this.#ws, true);
    this.#ws = null;
  }

  // ── the socket ──────────────────────────────────────────────────────────

  private connect(): void {
    const gen = ++this.gen;
    this.open = false;
    this.segments = [];
    this.interim = '';
    this.closeSent = false;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url, {
        headers: { Authorization: `Token ${this.#apiKey}` },
        perMessageDeflate: false,
        followRedirects: false,
      });
    } catch (err) {
      queueMicrotask(() =>
        this.fail(gen, {
          kind: 'unavailable',
          message: `cannot open a socket to Deepgram (${this.describe(err)})`,
          retry: false,
        }),
      );
      return;
    }
    this.#ws = ws;
    const stale = (): boolean => gen !== this.gen || this.terminal();
    this.stopConnectTimer = this.clock.setTimer(() => {
      if (!stale() && !this.open)
        this.fail(gen, {
          kind: 'timeout',
          message: `no answer from Deepgram within ${this.settings.connectTimeoutMs} ms`,
          retry: true,
        });
    }, this.settings.connectTimeoutMs);
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      const detail = typeof res.headers['dg-error'] === 'string' ? res.headers['dg-error'] : '';
      res.resume();
      if (!stale()) this.fail(gen, deepgramRefusal(status, detail));
      else this.dispose(ws, false);
    });
    ws.on('open', () => {
      if (stale()) return this.dispose(ws, true);
      this.stopConnectTimer?.();
      this.open = true;
      this.lastSentAt = this.clock.now();
      for (const chunk of this.audio) this.sendAudio(chunk); // buffered before the socket opened, or the replay
      if (this.current === 'finishing') this.sendFinish();
      this.scheduleKeepAlive(gen);
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (!stale() && !isBinary) this.onMessage(data);
    });
    ws.on('error', (err: Error) => {
      if (stale()) return;
      const code = (err as NodeJS.ErrnoException).code;
      this.fail(
        gen,
        this.open
          ? { kind: 'crashed', message: `the Deepgram socket failed (${this.describe(err)})`, retry: true }
          : {
              kind: 'unavailable',
              message: `cannot reach Deepgram at ${this.host()} (${code ?? this.describe(err)})`,
              retry: true,
            },
      );
    });
    ws.on('close', (code: number, reason: Buffer) => {
      if (stale()) return;
      this.open = false;
      this.stopTimers();
      if (this.closeSent && code === 1000) return this.deliverFinal(false); // CloseStream answered: flush complete
      const why = reason.length > 0 ? ` ${reason.toString('utf8').slice(0, 80)}` : '';
      this.fail(gen, {
        kind: 'crashed',
        message: `Deepgram closed the stream before the transcript (${code}${why})`,
        retry: true,
      });
    });
  }

  private onMessage(data: RawData): void {
    let msg: Record<string, unknown>;
    try {
      const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null) return;
      msg = parsed as Record<string, unknown>;
    } catch {
      return; // not JSON: nothing Deepgram sends; ignored
    }
    if (msg.type === 'Results') this.onResults(msg);
    else if (msg.type === 'UtteranceEnd') {
      if (this.current === 'open' && this.heardWords()) this.deliverFinal(true);
    } else if (msg.type === 'Metadata') {
      if (this.closeSent && this.current === 'finishing') this.deliverFinal(false);
    }
    // SpeechStarted: vagent's own VAD already opened this stream at the onset.
  }

  private onResults(msg: Record<string, unknown>): void {
    const channel = msg.channel as { alternatives?: Array<{ transcript?: unknown; confidence?: unknown }> } | undefined;
    const alt = channel?.alternatives?.[0];
    const transcript = typeof alt?.transcript === 'string' ? alt.transcript.trim() : '';
    const confidence = typeof alt?.confidence === 'number' && alt.confidence >= 0 && alt.confidence <= 1 ? alt.confidence : null;
    if (msg.is_final === true) {
      if (transcript !== '') this.segments.push({ text: transcript, confidence });
      this.interim = '';
      if (msg.from_finalize === true && this.current === 'finishing') return this.deliverFinal(false);
      if (msg.speech_final === true && this.current === 'open' && this.heardWords()) return this.deliverFinal(true);
    } else {
      this.interim = transcript;
    }
    const start = typeof msg.start === 'number' ? msg.start : 0;
    const duration = typeof msg.duration === 'number' ? msg.duration : 0;
    this.sendPartial(Math.min(this.ms(this.samples), Math.max(0, (start + duration) * 1000)));
  }

  private sendPartial(endMs: number): void {
    const text = [...this.segments.map((s) => s.text), this.interim].filter(Boolean).join(' ');
    if (text === '' || text === this.lastPartial) return;
    this.lastPartial = text;
    this.events.emit('partial', { text, startMs: 0, endMs });
  }

  private heardWords(): boolean {
    return this.segments.length > 0;
  }

  private deliverFinal(endOfUtterance: boolean): void {
    if (this.terminal()) return;
    const text = this.segments.map((s) => s.text).join(' ');
    // The mean of Deepgram's own confidences; null (no measure, none invented) if a segment came without one.
    const scores = this.segments.map((s) => s.confidence);
    const confidence = scores.length > 0 && scores.every((c) => c !== null) ? scores.reduce((n, c) => n + c!, 0) / scores.length : null;
    const endMs = this.ms(this.samples);
    const final: FinalTranscript = {
      text,
      confidence: text === '' ? 0 : confidence,
      startMs: 0,
      endMs,
      audioMs: endMs,
      ...(endOfUtterance ? { endOfUtterance: true } : {}),
    };
    this.current = 'done';
    this.audio.length = 0;
    this.stopTimers();
    this.finishSocket();
    this.events.emit('final', final);
  }

  /** Ends a socket after the final: `CloseStream` (Deepgram closes), or a plain close. */
  private finishSocket(): void {
    const ws = this.#ws;
    this.gen++;
    this.#ws = null;
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN) {
      if (!this.closeSent) ws.send(JSON.stringify({ type: 'CloseStream' }));
      const t = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
      t.unref();
      ws.once('close', () => clearTimeout(t));
    } else this.dispose(ws, true);
  }

  private fail(gen: number, failure: ConnectFailure): void {
    if (gen !== this.gen || this.terminal()) return;
    this.gen++;
    this.stopTimers();
    this.dispose(this.#ws, true);
    this.#ws = null;
    this.open = false;
    if (failure.retry && this.failures === 0) {
      this.failures++;
      if (failure.delayMs) this.stopRetry = this.clock.setTimer(() => !this.terminal() && this.connect(), failure.delayMs);
      else this.connect();
      return;
    }
    this.failures++;
    this.current = 'failed';
    this.audio.length = 0;
    // Defence in depth: no message is built from the key.
    const message = redactSecrets(failure.message, [this.#apiKey]);
    this.events.emit('error', new RecognizerError(failure.kind, DEEPGRAM_PROVIDER, message));
  }

  private sendAudio(bytes: Buffer): void {
    this.#ws?.send(bytes);
    this.lastSentAt = this.clock.now();
  }

  /** `Finalize` then `CloseStream` (see the module doc for why both). */
  private sendFinish(): void {
    if (!this.#ws || this.closeSent) return;
    this.#ws.send(JSON.stringify({ type: 'Finalize' }));
    this.#ws.send(JSON.stringify({ type: 'CloseStream' }));
    this.closeSent = true;
    this.lastSentAt = this.clock.now();
  }

  private scheduleKeepAlive(gen: number): void {
    const every = this.settings.keepAliveMs;
    const due = Math.max(1, this.lastSentAt + every - this.clock.now());
    this.stopKeepAlive = this.clock.setTimer(() => {
      if (gen !== this.gen || this.terminal() || !this.open || !this.#ws) return;
      if (this.clock.now() - this.lastSentAt >= every && !this.closeSent) {
        this.#ws.send(JSON.stringify({ type: 'KeepAlive' }));
        this.lastSentAt = this.clock.now();
      }
      this.scheduleKeepAlive(gen);
    }, due);
  }

  private stopTimers(): void {
    this.stopConnectTimer?.();
    this.stopConnectTimer = undefined;
    this.stopKeepAlive?.();
    this.stopKeepAlive = undefined;
  }

  /** Lets go of a socket whose events no longer matter. */
  private dispose(ws: WebSocket | null, close: boolean): void {
    if (!ws) return;
    ws.on('error', () => undefined);
    if (!close) return;
    try {
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    } catch {
      // already closing
    }
  }

  private terminal(): boolean {
    return this.current === 'done' || this.current === 'failed' || this.current === 'cancelled';
  }

  private ms(samples: number): number {
    return (samples / this.options.sampleRateHz) * 1000;
  }

  private host(): string {
    try {
      return new URL(this.settings.url).host;
    } catch {
      return 'the configured URL';
    }
  }

  private describe(err: unknown): string {
    return err instanceof Error ? err.message : String(err);
  }
}

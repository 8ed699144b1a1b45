/**
 * One Sarvam recognition stream: its socket (./sarvam-protocol.ts for what goes on the wire),
 * the utterance's 16 kHz audio, and the state that turns Sarvam's messages into the port's
 * `final` and `error` events.
 *
 * One WebSocket per utterance ({@link RecognitionStream}): opened at `start()`, audio pushed
 * before it opens is kept and sent on open, in chunks of `CHUNK_MS` ms. The stream ends in
 * one of two ways, whichever comes first:
 * - Sarvam's own endpointing: an END_SPEECH (or a transcript) before `finish()` → the final, marked
 *   `endOfUtterance`, is the transcript that follows; audio pushed after END_SPEECH is not sent.
 * - vagent's VAD: `finish()` sends `flush`; the final is the transcript that answers it (joined with
 *   any transcript of an END_SPEECH still in flight: one final per stream). Sarvam's answer to a
 *   flush with nothing buffered is not documented; vagent's `withTimeout` guards it.
 * Then the socket gets `end_of_stream` and is closed.
 *
 * Failures: the socket dropping (or erroring) before the final, a 5xx or 429 handshake, or no
 * handshake within `connectTimeoutMs`, earn one reconnect, which replays all of this utterance's
 * audio so far; a second failure is the stream's `error`. 401/403 (and other 4xx) fail at once as
 * `unavailable`. The API key never appears in an error message.
 */
import WebSocket from 'ws';
import { redactSecrets } from '../../domain/redact.js';
import type { ConnectFailure } from './cloud-socket.js';
import { CHUNK_MS, END_OF_STREAM_MESSAGE, SARVAM_SAMPLE_RATE, sarvamHandshakeFailure } from './sarvam-protocol.js';
import { StreamingResampler } from '../../media/audio-resample.js';
import { RecognizerError, type FinalTranscript, type RecognitionOptions, type RecognizerClock } from '../../media/recognizer.js';
import { BaseRecognitionStream } from '../../media/recognition-stream.js';

/** Connection attempts per stream: the first and one reconnect. */
const MAX_ATTEMPTS = 2;

/** What a stream reads of its recogniser: the provider's name and the connection settings. */
export interface SarvamStreamOwner {
  readonly provider: string;
  readonly config: Readonly<{ apiKey: string; connectTimeoutMs: number; clock: RecognizerClock }>;
}

/** A Sarvam recognition stream: one socket at a time, reconnected once (see the module doc). */
export class SarvamStream extends BaseRecognitionStream {
  private settled = false;
  private readonly resampler: StreamingResampler | null;
  /** All 16 kHz audio of this utterance that is to go to Sarvam (replayed on reconnect). */
  private readonly audio: Int16Array[] = [];
  /** Samples of `audio` already sent on the current socket. */
  private sentSamples = 0;
  /** 16 kHz samples in `audio`. */
  private totalSamples = 0;
  /** Input samples pushed (at `options.sampleRateHz`). */
  private pushed = 0;
  private ws: WebSocket | undefined;
  private open = false;
  private attempts = 0;
  private stopTimer: (() => void) | undefined;
  /** Transcripts received on the current socket. */
  private segments: string[] = [];
  private endSpeeches = 0;
  private flushSent = false;
  /** Stream ms at Sarvam's END_SPEECH (it endpointed), else undefined. */
  private endpointedAtMs: number | undefined;

  constructor(
    private readonly owner: SarvamStreamOwner,
    readonly options: Readonly<RecognitionOptions>,
    private readonly url: string,
  ) {
    super();
    this.resampler = options.sampleRateHz === SARVAM_SAMPLE_RATE ? null : new StreamingResampler(options.sampleRateHz, SARVAM_SAMPLE_RATE);
    this.connect();
  }

  protected accept(pcm: Int16Array): void {
    this.pushed += pcm.length;
    if (this.endpointedAtMs !== undefined) return; // Sarvam has ended the utterance: later audio is not part of it
    this.append(this.resampler ? this.resampler.push(pcm) : pcm);
    this.sendAudio(false);
  }

  protected onFinish(): void {
    if (this.endpointedAtMs !== undefined) return; // the transcript of Sarvam's END_SPEECH is on its way
    if (this.resampler) this.append(this.resampler.flush());
    this.sendAudio(true);
    this.sendFlush();
  }

  cancel(): void {
    if (this.current === 'cancelled' || this.current === 'done') return;
    this.current = 'cancelled';
    this.settled = true;
    this.drop();
  }

  private append(pcm: Int16Array): void {
    if (pcm.length === 0) return;
    this.audio.push(pcm);
    this.totalSamples += pcm.length;
  }

  /** Sends what has not been sent on this socket, in {@link CHUNK_MS} chunks (the remainder too when `all`). */
  private sendAudio(all: boolean): void {
    const ws = this.ws;
    if (!ws || !this.open) return;
    const chunk = (SARVAM_SAMPLE_RATE * CHUNK_MS) / 1000;
    while (this.totalSamples - this.sentSamples >= chunk || (all && this.totalSamples > this.sentSamples)) {
      const n = Math.min(chunk, this.totalSamples - this.sentSamples);
      const data = Buffer.from(this.slice(this.sentSamples, n).buffer).toString('base64');
      ws.send(JSON.stringify({ audio: { data, sample_rate: SARVAM_SAMPLE_RATE, encoding: 'audio/wav' } }));
      this.sentSamples += n;
    }
  }

  /** `n` samples of the utterance's audio from sample `from`, little-endian (the hosts are). */
  private slice(from: number, n: number): Int16Array {
    const out = new Int16Array(n);
    let at = 0;
    let offset = 0;
    for (const part of this.audio) {
      const end = offset + part.length;
      if (end > from && at < n) {
        const start = Math.max(0, from + at - offset);
        const take = Math.min(part.length - start, n - at);
        out.set(part.subarray(start, start + take), at);
        at += take;
      }
      offset = end;
      if (at >= n) break;
    }
    return out;
  }

  private sendFlush(): void {
    if (!this.ws || !this.open || this.flushSent) return;
    this.flushSent = true;
    this.ws.send(JSON.stringify({ type: 'flush' }));
  }

  private connect(): void {
    this.attempts++;
    this.open = false;
    this.sentSamples = 0;
    this.segments = [];
    this.endSpeeches = 0;
    this.flushSent = false;
    const { apiKey, connectTimeoutMs, clock } = this.owner.config;
    const ws = new WebSocket(this.url, { headers: { 'Api-Subscription-Key': apiKey } });
    this.ws = ws;
    this.stopTimer = clock.setTimer(() => {
      this.stopTimer = undefined;
      if (this.ws === ws && !this.open)
        this.failed({
          kind: 'unavailable',
          message: `no answer from Sarvam within ${connectTimeoutMs} ms of connecting`,
          retry: true,
        });
    }, connectTimeoutMs);
    ws.on('unexpected-response', (req, res) => {
      req.destroy();
      if (this.ws === ws) this.failed(sarvamHandshakeFailure(res.statusCode ?? 0));
    });
    ws.on('open', () => {
      if (this.ws !== ws) return;
      this.open = true;
      this.stopTimer?.();
      this.stopTimer = undefined;
      // After finish(), or a reconnect once Sarvam had endpointed: all the audio, then flush.
      const last = this.current === 'finishing' || this.endpointedAtMs !== undefined;
      this.sendAudio(last);
      if (last) this.sendFlush();
    });
    ws.on('message', (raw, isBinary) => {
      if (this.ws === ws) this.onMessage(isBinary ? '' : raw.toString());
    });
    ws.on('error', (err: NodeJS.ErrnoException) => {
      if (this.ws !== ws) return;
      const message = this.open
        ? 'the connection to Sarvam failed mid-utterance'
        : `cannot reach Sarvam at ${new URL(this.url).host}${err.code ? ` (${err.code})` : ''}`;
      this.failed({ kind: this.open ? 'crashed' : 'unavailable', message, retry: true });
    });
    ws.on('close', (code) => {
      if (this.ws !== ws) return;
      if (code === 1000 && this.flushSent) {
        this.finalize(this.endpointedAtMs !== undefined); // Sarvam closed after answering everything it had
        return;
      }
      this.failed({
        kind: 'crashed',
        message: `the connection to Sarvam dropped mid-utterance (close code ${code})`,
        retry: true,
      });
    });
  }

  private onMessage(text: string): void {
    if (this.settled) return;
    let msg: { type?: unknown; data?: Record<string, unknown> };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      this.failed({ kind: 'crashed', message: 'Sarvam sent a message that is not JSON', retry: true });
      return;
    }
    const data = msg.data && typeof msg.data === 'object' ? msg.data : {};
    if (msg.type === 'events') {
      if (data.signal_type === 'END_SPEECH') {
        this.endSpeeches++;
        if (this.current === 'open' && this.endpointedAtMs === undefined) this.endpointedAtMs = this.ms(this.pushed);
      }
    } else if (msg.type === 'data') {
      this.segments.push(typeof data.transcript === 'string' ? data.transcript.trim() : '');
      if (this.current === 'open') {
        this.endpointedAtMs ??= this.ms(this.pushed); // a transcript without END_SPEECH: Sarvam endpointed all the same
        this.finalize(true);
      } else if (this.endpointedAtMs !== undefined) {
        this.finalize(true);
      } else if (this.flushSent && this.segments.length >= this.endSpeeches + 1) {
        this.finalize(false);
      }
    } else if (msg.type === 'error') {
      const what = typeof data.error === 'string' ? data.error : typeof data.message === 'string' ? data.message : 'no message';
      const code = typeof data.code === 'string' || typeof data.code === 'number' ? ` [${data.code}]` : '';
      this.failed({ kind: 'crashed', message: `Sarvam reported an error${code}: ${what.slice(0, 160)}`, retry: true });
    }
  }

  /** Handles the failure of the current connection: one reconnect, else the stream's error. */
  private failed(f: ConnectFailure): void {
    if (this.settled) return;
    this.drop();
    if (f.retry && this.attempts < MAX_ATTEMPTS) {
      if (f.delayMs) {
        this.stopTimer = this.owner.config.clock.setTimer(() => {
          this.stopTimer = undefined;
          if (!this.settled) this.connect();
        }, f.delayMs);
      } else {
        this.connect();
      }
      return;
    }
    this.settled = true;
    this.current = 'failed';
    const message = redactSecrets(`${f.message}${this.attempts > 1 ? ' (after one reconnect)' : ''}`, [this.owner.config.apiKey]);
    setImmediate(() => {
      if (this.current === 'failed') this.events.emit('error', new RecognizerError(f.kind, this.owner.provider, message));
    });
  }

  private finalize(endOfUtterance: boolean): void {
    if (this.settled) return;
    this.settled = true;
    const ws = this.ws;
    this.ws = undefined;
    this.stopTimer?.();
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(END_OF_STREAM_MESSAGE);
      ws.close(1000);
    }
    const text = this.segments.filter((s) => s !== '').join(' ');
    const endMs = endOfUtterance ? (this.endpointedAtMs ?? this.ms(this.pushed)) : this.ms(this.pushed);
    // Sarvam sends no confidence for the words (`language_probability` is about the language, and
    // null when `language-code` is given): a transcript's is null, never a made-up number.
    const final: FinalTranscript = { text, confidence: text ? null : 0, startMs: 0, endMs, audioMs: endMs };
    if (endOfUtterance) final.endOfUtterance = true;
    setImmediate(() => {
      if (this.current === 'cancelled') return; // cancel() came first: nothing after it
      this.current = 'done';
      this.events.emit('final', final);
    });
  }

  /** Forgets the current socket and closes it at once. */
  private drop(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
    const ws = this.ws;
    this.ws = undefined;
    this.open = false;
    if (ws) {
      ws.on('error', () => undefined); // late errors of an abandoned socket
      ws.terminate();
    }
  }

  private ms(samples: number): number {
    return (samples / this.options.sampleRateHz) * 1000;
  }
}

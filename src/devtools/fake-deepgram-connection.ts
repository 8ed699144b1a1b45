/**
 * One socket accepted by the fake Deepgram server: the energy detector that times speech, and the
 * messages it sends (`Results`, `SpeechStarted`, `UtteranceEnd`, `Metadata`) as Deepgram does.
 *
 * How it "recognises": transcripts come from a script (one entry per utterance heard, a queue
 * shared by all connections; an entry is consumed when a connection finalises a segment of
 * speech, so a connection dropped mid-utterance leaves it for the replay). Timing comes from an
 * energy detector on the linear16 audio received, in 10 ms frames: a frame whose RMS exceeds
 * `speechLevel` is speech. Speech onset sends `SpeechStarted` (with `vad_events=true`); every
 * 300 ms of speech an interim `Results` (with `interim_results=true`) holding one more of the
 * script text's leading words; `endpointing` ms of silence after speech a final `Results` with
 * `speech_final: true` (Deepgram's default endpointing is 10 ms; `endpointing=false` turns it
 * off); `utterance_end_ms` of silence after the last finalised word an `UtteranceEnd`.
 * `Finalize` flushes: a final `Results` with `from_finalize: true` when audio is pending (none
 * when nothing is, as Deepgram does not guarantee one then). Stream times are seconds of audio
 * received on that connection.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import type { FakeDeepgram, FakeDeepgramConnection, FakeDeepgramFault } from './fake-deepgram-api.js';

const FRAME_MS = 10;
const INTERIM_EVERY_MS = 300;
const MODEL_UUID = '40bd3654-e622-47c4-a111-63a61b23bfa4';

/** The utterances still to be heard, shared by every connection of one fake. */
export interface Script {
  items: Array<{ text: string; confidence: number }>;
}

/** One accepted socket: the energy detector and the message timing. */
export class Connection {
  readonly record: FakeDeepgramConnection;
  private readonly chunks: Buffer[] = [];
  private readonly rate: number;
  private readonly frame: number;
  private readonly interim: boolean;
  private readonly vadEvents: boolean;
  private readonly endpointingMs: number | null;
  private readonly utteranceEndMs: number | null;
  private readonly requestId = randomUUID();
  private leftover = Buffer.alloc(0);
  /** Samples processed (whole frames). */
  private pos = 0;
  /** Sample where the not-yet-finalised window begins. */
  private cursor = 0;
  /** Samples of the window's speech so far, 0 when none. */
  private speechSamples = 0;
  /** First and last speech sample of the window. */
  private speechFrom = -1;
  private speechTo = -1;
  private inSpeech = false;
  private interimsSent = 0;
  /** End of the last finalised word (samples) while an UtteranceEnd is owed. */
  private owedUtteranceEnd = -1;
  private idleTimer: NodeJS.Timeout | undefined;
  private dropTimer: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly index: number,
    query: Record<string, string | string[]>,
    headers: Record<string, string | string[] | undefined>,
    params: URLSearchParams,
    private readonly script: Script,
    private readonly fake: FakeDeepgram,
    private readonly fault: FakeDeepgramFault,
    private readonly speechLevel: number,
    private readonly idleTimeoutMs: number,
    private readonly changed: () => void,
  ) {
    this.rate = Number(params.get('sample_rate'));
    this.frame = Math.round((this.rate * FRAME_MS) / 1000);
    this.interim = params.get('interim_results') === 'true';
    this.vadEvents = params.get('vad_events') === 'true';
    const ep = params.get('endpointing');
    this.endpointingMs = ep === 'false' ? null : ep === null || ep === 'true' ? 10 : Number(ep);
    const ue = params.get('utterance_end_ms');
    this.utteranceEndMs = ue === null ? null : Number(ue);
    const chunks = this.chunks;
    this.record = {
      query,
      headers,
      bytes: 0,
      audio: () => Buffer.concat(chunks),
      sent: [],
      closed: false,
    };
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on('close', () => {
      this.record.closed = true;
      clearTimeout(this.idleTimer);
      clearTimeout(this.dropTimer);
    });
    ws.on('error', () => undefined);
    this.touch();
    if (fault.dropAfterMs !== undefined) this.dropTimer = setTimeout(() => this.drop(), fault.dropAfterMs);
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.closing = true;
      this.ws.close(1011, 'NET-0001');
    }, this.idleTimeoutMs);
  }

  private drop(): void {
    this.closing = true;
    this.ws.terminate();
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.closing) return;
    this.touch();
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) {
      if (buf.length === 0) return;
      this.chunks.push(buf);
      this.record.bytes += buf.length;
      if (this.fault.dropAfterBytes !== undefined && this.record.bytes >= this.fault.dropAfterBytes) {
        this.drop();
        this.changed();
        return;
      }
      this.hear(buf);
      this.changed();
      return;
    }
    let type = 'text';
    try {
      const parsed = JSON.parse(buf.toString('utf8')) as { type?: unknown };
      if (typeof parsed?.type === 'string') type = parsed.type;
    } catch {
      // not JSON: recorded as text, ignored
    }
    this.fake.messages.push({ connection: this.index, type, afterBytes: this.record.bytes });
    if (type === 'Finalize') this.flush(true);
    else if (type === 'CloseStream') {
      this.flush(false);
      this.send({
        type: 'Metadata',
        transaction_key: 'deprecated',
        request_id: this.requestId,
        sha256: createHash('sha256').update(Buffer.concat(this.chunks)).digest('hex'),
        created: new Date().toISOString(),
        duration: this.seconds(this.pos),
        channels: 1,
        models: [MODEL_UUID],
        model_info: { [MODEL_UUID]: { name: 'general-nova-3', version: '2024-12-20.0', arch: 'nova-3' } },
      });
      this.closing = true;
      this.later(() => this.ws.close(1000));
    }
    this.changed();
  }

  /** Runs the energy detector over new audio, frame by frame. */
  private hear(buf: Buffer): void {
    const all = this.leftover.length > 0 ? Buffer.concat([this.leftover, buf]) : buf;
    const frameBytes = this.frame * 2;
    let at = 0;
    for (; at + frameBytes <= all.length; at += frameBytes) this.onFrame(all.subarray(at, at + frameBytes));
    this.leftover = Buffer.from(all.subarray(at));
  }

  private onFrame(frame: Buffer): void {
    let sum = 0;
    for (let i = 0; i + 1 < frame.length; i += 2) {
      const v = frame.readInt16LE(i);
      sum += v * v;
    }
    const speech = Math.sqrt(sum / this.frame) > this.speechLevel;
    const start = this.pos;
    this.pos += this.frame;
    if (speech) {
      this.owedUtteranceEnd = -1;
      if (!this.inSpeech && this.vadEvents) this.send({ type: 'SpeechStarted', channel: [0, 1], timestamp: this.seconds(start) });
      this.inSpeech = true;
      if (this.speechFrom < 0) this.speechFrom = start;
      this.speechTo = this.pos;
      this.speechSamples += this.frame;
      if (this.interim && this.speechSamples * 1000 >= (this.interimsSent + 1) * INTERIM_EVERY_MS * this.rate) this.sendInterim();
      return;
    }
    if (this.inSpeech && this.endpointingMs !== null && (this.pos - this.speechTo) * 1000 >= this.endpointingMs * this.rate) {
      this.inSpeech = false;
      this.finalise({ speechFinal: true, fromFinalize: false });
    } else if (this.inSpeech && this.endpointingMs === null && (this.pos - this.speechTo) * 1000 >= INTERIM_EVERY_MS * this.rate) {
      this.inSpeech = false; // a new onset may send SpeechStarted again
    }
    if (
      this.owedUtteranceEnd >= 0 &&
      this.utteranceEndMs !== null &&
      (this.pos - this.owedUtteranceEnd) * 1000 >= this.utteranceEndMs * this.rate
    ) {
      this.send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: this.seconds(this.owedUtteranceEnd) });
      this.owedUtteranceEnd = -1;
    }
  }

  private sendInterim(): void {
    this.interimsSent++;
    const next = this.script.items[0];
    if (!next) return;
    const words = next.text.split(/\s+/).filter(Boolean);
    const some = words.slice(0, Math.min(words.length, this.interimsSent));
    if (some.length === 0) return;
    this.send(this.results(some, Math.max(0, next.confidence - 0.1), { isFinal: false, speechFinal: false, fromFinalize: false }));
  }

  /** Closes the window [cursor, pos) with a final `Results`. */
  private finalise(flags: { speechFinal: boolean; fromFinalize: boolean }): void {
    const heard = this.speechSamples > 0;
    const item = heard ? this.script.items.shift() : undefined;
    const words = item ? item.text.split(/\s+/).filter(Boolean) : [];
    this.send(this.results(words, item ? item.confidence : 0, { isFinal: true, ...flags }));
    if (words.length > 0) this.owedUtteranceEnd = this.speechTo;
    this.cursor = this.pos;
    this.speechSamples = 0;
    this.speechFrom = -1;
    this.interimsSent = 0;
    this.changed();
  }

  /** `Finalize` (with `from_finalize`) or `CloseStream`: finalises pending audio, if any. */
  private flush(fromFinalize: boolean): void {
    if (this.leftover.length >= 2) {
      // a partial last frame still counts as audio received
      this.pos += Math.floor(this.leftover.length / 2);
      this.leftover = Buffer.alloc(0);
    }
    if (this.pos > this.cursor) this.finalise({ speechFinal: false, fromFinalize });
    this.inSpeech = false;
  }

  private results(
    words: string[],
    confidence: number,
    flags: { isFinal: boolean; speechFinal: boolean; fromFinalize: boolean },
  ): Record<string, unknown> {
    const from = this.speechFrom >= 0 ? this.speechFrom : this.cursor;
    const to = this.speechTo > from ? this.speechTo : this.pos;
    const step = words.length > 0 ? (to - from) / words.length : 0;
    const message: Record<string, unknown> = {
      type: 'Results',
      channel_index: [0, 1],
      duration: this.seconds(this.pos - this.cursor),
      start: this.seconds(this.cursor),
      is_final: flags.isFinal,
      speech_final: flags.speechFinal,
      channel: {
        alternatives: [
          {
            transcript: words.join(' '),
            confidence,
            words: words.map((w, i) => ({
              word: w.toLowerCase().replace(/[.,!?;:]+$/u, ''),
              start: this.seconds(from + i * step),
              end: this.seconds(from + (i + 1) * step),
              confidence,
              punctuated_word: w,
            })),
          },
        ],
      },
      metadata: {
        request_id: this.requestId,
        model_info: { name: 'general-nova-3', version: '2024-12-20.0', arch: 'nova-3' },
        model_uuid: MODEL_UUID,
      },
    };
    if (flags.fromFinalize) message.from_finalize = true;
    return message;
  }

  private seconds(samples: number): number {
    return Math.round((samples / this.rate) * 1000) / 1000;
  }

  private send(message: Record<string, unknown>): void {
    this.record.sent.push(message);
    const text = JSON.stringify(message);
    this.later(() => {
      if (this.ws.readyState === this.ws.OPEN) this.ws.send(text);
    });
  }

  /** Runs `fn` after the connection's delay (0: still after the current message, in order). */
  private later(fn: () => void): void {
    const delay = (this.fault.delayMs ?? 0) + this.fake.delayMs;
    if (delay > 0) setTimeout(fn, delay);
    else fn();
  }
}

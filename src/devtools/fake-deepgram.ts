/**
 * A local fake of Deepgram's streaming speech-to-text endpoint (`wss://api.deepgram.com/v1/listen`)
 * that speaks its WebSocket protocol: the recogniser tests run against it, and operators can try
 * vagent's Deepgram recogniser without an account (`npm run fake-deepgram`).
 *
 * Protocol sources it mirrors:
 * - Handshake: `Authorization: Token <key>` (https://developers.deepgram.com/reference/speech-to-text/listen-streaming);
 *   a refused handshake is an HTTP 4xx/5xx instead of 101 with a JSON body
 *   `{err_code, err_msg, request_id}` and a `dg-error` header
 *   (https://developers.deepgram.com/docs/stt-troubleshooting-websocket-data-and-net-errors).
 * - Client messages: binary audio frames and the JSON control messages `KeepAlive`, `Finalize`,
 *   `CloseStream` (deepgram-python-sdk `src/deepgram/extensions/types/sockets/listen_v1_control_message.py`;
 *   https://developers.deepgram.com/docs/finalize, https://developers.deepgram.com/docs/audio-keep-alive).
 * - Server messages: `Results` (deepgram-js-sdk `src/lib/types/LiveTranscriptionEvent.ts`,
 *   deepgram-python-sdk `listen_v1_results_event.py`: `channel_index`, `start`, `duration`,
 *   `is_final`, `speech_final`, `from_finalize`, `channel.alternatives[].{transcript, confidence, words}`,
 *   `metadata`), `UtteranceEnd` (`channel`, `last_word_end`; js-sdk `UtteranceEndEvent.ts`),
 *   `SpeechStarted` (`channel`, `timestamp`; python-sdk `listen_v1_speech_started_event.py`) and
 *   `Metadata` (`request_id`, `sha256`, `created`, `duration`, `channels`; python-sdk
 *   `listen_v1_metadata_event.py`), sent after `CloseStream` before a 1000 close.
 * - Errors after the handshake are close frames: 1011 `NET-0001` when no audio or KeepAlive came
 *   within the idle window (10 s at Deepgram).
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
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

/** One scripted utterance: its text, or its text and confidence (0..1, default 0.95). */
export type FakeDeepgramUtterance = string | { text: string; confidence?: number };

/** A misbehaviour for one connection attempt (see {@link FakeDeepgram.faults}). */
export interface FakeDeepgramFault {
  /** Refuse the handshake with this HTTP status (e.g. 401, 403, 429, 500, 503). */
  reject?: number;
  /** Drop the TCP connection (no close frame) this many ms after the socket opened. */
  dropAfterMs?: number;
  /** Drop the TCP connection (no close frame) once this many audio bytes have arrived on it. */
  dropAfterBytes?: number;
  /** Hold every message to the client this many ms (a slow provider). */
  delayMs?: number;
}

/** Options of {@link startFakeDeepgram}. */
export interface FakeDeepgramOptions {
  /** The API key clients must send as `Authorization: Token <key>`. Default `dev-deepgram-key`. */
  apiKey?: string;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** TCP port; `0` (the default) picks a free one. */
  port?: number;
  /** Utterances in the order they are to be heard; more with {@link FakeDeepgram.enqueue}. */
  script?: readonly FakeDeepgramUtterance[];
  /** Frame RMS (of 32 767) above which a 10 ms frame counts as speech. Default 500 (about -36 dBFS). */
  speechLevel?: number;
  /** Close a connection with 1011 `NET-0001` after this many ms with neither audio nor a text frame. Default 10 000 (Deepgram's window). */
  idleTimeoutMs?: number;
  /** Faults for the next connection attempts, one taken per attempt; see {@link FakeDeepgram.faults}. */
  faults?: readonly FakeDeepgramFault[];
  /** Called for each handshake, accepted or refused (for the CLI's log). */
  onHandshake?: (handshake: FakeDeepgramHandshake) => void;
}

/** One handshake as the fake saw it; the `authorization` header is never recorded. */
export interface FakeDeepgramHandshake {
  /** The query parameters (repeated ones, e.g. `keyterm`, as arrays). */
  query: Record<string, string | string[]>;
  /** Request headers without `authorization`. */
  headers: Record<string, string | string[] | undefined>;
  /** The HTTP status answered: 101 when the socket opened. */
  status: number;
}

/** A control or unknown text message a client sent, in order of arrival. */
export interface FakeDeepgramMessage {
  /** Index of the connection in {@link FakeDeepgram.connections}. */
  connection: number;
  /** The `type` of a JSON message (`KeepAlive`, `Finalize`, `CloseStream`…), or `text` for anything else. */
  type: string;
  /** Audio bytes received on that connection before this message. */
  afterBytes: number;
}

/** An accepted connection. */
export interface FakeDeepgramConnection {
  /** The query parameters of its handshake. */
  query: Record<string, string | string[]>;
  /** Its request headers without `authorization`. */
  headers: Record<string, string | string[] | undefined>;
  /** Audio bytes received. */
  bytes: number;
  /** All audio received, concatenated (linear16 as sent). */
  audio(): Buffer;
  /** Messages sent to the client, parsed, in order. */
  sent: Array<Record<string, unknown>>;
  /** Whether the socket has closed. */
  closed: boolean;
}

/** A running fake Deepgram server. */
export interface FakeDeepgram {
  /** `ws://host:port/v1/listen`, the value of `VAGENT_DEEPGRAM_URL`. */
  readonly url: string;
  /** The API key it accepts. */
  readonly apiKey: string;
  /** Every handshake, accepted or refused, in order. */
  readonly handshakes: FakeDeepgramHandshake[];
  /** Accepted connections, in order. */
  readonly connections: FakeDeepgramConnection[];
  /** Text messages received on any connection, in order. */
  readonly messages: FakeDeepgramMessage[];
  /** Faults for the next connection attempts: each handshake with a valid key takes the first one (if any). Mutable. */
  faults: FakeDeepgramFault[];
  /** Hold every message to every client this many ms (on top of a fault's own). Mutable; default 0. */
  delayMs: number;
  /** Appends utterances to the script. */
  enqueue(...utterances: FakeDeepgramUtterance[]): void;
  /** Utterances not yet heard. */
  readonly remaining: number;
  /** Resolves once `predicate` holds, re-checked on every event of the fake; rejects after `timeoutMs` (default 5000). */
  until(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  /** Closes every connection and the server. */
  close(): Promise<void>;
}

/** Encodings Deepgram's live endpoint accepts (https://developers.deepgram.com/docs/encoding). */
const ENCODINGS = ['linear16', 'linear32', 'flac', 'alaw', 'mulaw', 'amr-nb', 'amr-wb', 'opus', 'ogg-opus', 'speex', 'g729'];
const BOOLEAN_PARAMS = [
  'interim_results',
  'vad_events',
  'smart_format',
  'punctuate',
  'diarize',
  'numerals',
  'profanity_filter',
  'filler_words',
  'multichannel',
  'no_delay',
  'dictation',
];
const FRAME_MS = 10;
const INTERIM_EVERY_MS = 300;
const MODEL_UUID = '40bd3654-e622-47c4-a111-63a61b23bfa4';

interface Script {
  items: Array<{ text: string; confidence: number }>;
}

/**
 * Starts the fake on `host:port`.
 * @throws RangeError on a malformed script entry, speech level or idle timeout
 */
export async function startFakeDeepgram(options: FakeDeepgramOptions = {}): Promise<FakeDeepgram> {
  const apiKey = options.apiKey ?? 'dev-deepgram-key';
  const speechLevel = options.speechLevel ?? 500;
  if (!(speechLevel > 0)) throw new RangeError(`speechLevel must be > 0; got ${speechLevel}`);
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000;
  if (!(idleTimeoutMs > 0)) throw new RangeError(`idleTimeoutMs must be > 0 ms; got ${idleTimeoutMs}`);
  const script: Script = { items: [] };
  const waiters = new Set<() => void>();
  const changed = (): void => {
    for (const w of [...waiters]) w();
  };
  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({ noServer: true });
  const server = http.createServer((_req, res) => {
    res
      .writeHead(426, { 'content-type': 'application/json' })
      .end(JSON.stringify({ err_code: 'UPGRADE_REQUIRED', err_msg: 'This endpoint speaks WebSocket only.' }));
  });

  const fake: FakeDeepgram = {
    url: '',
    apiKey,
    handshakes: [],
    connections: [],
    messages: [],
    faults: [...(options.faults ?? [])],
    delayMs: 0,
    enqueue(...utterances) {
      for (const [i, u] of utterances.entries()) script.items.push(checkUtterance(u, i));
      changed();
    },
    get remaining() {
      return script.items.length;
    },
    until(predicate, timeoutMs = 5000) {
      if (predicate()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!predicate()) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake-deepgram: condition not met within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
  fake.enqueue(...(options.script ?? []));

  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = queryRecord(url.searchParams);
    const headers = { ...req.headers };
    delete headers.authorization;
    const refuse = (status: number, code: string, message: string): void => {
      fake.handshakes.push({ query, headers, status });
      options.onHandshake?.({ query, headers, status });
      refuseUpgrade(socket, status, code, message);
      changed();
    };
    if (url.pathname !== '/v1/listen') return refuse(404, 'NOT_FOUND', `No route for ${url.pathname}.`);
    if (req.headers.authorization !== `Token ${apiKey}`) return refuse(401, 'INVALID_AUTH', 'Invalid credentials.');
    const fault = fake.faults.shift() ?? {};
    if (fault.reject !== undefined) return refuse(fault.reject, errCode(fault.reject), errMessage(fault.reject));
    const bad = badParams(url.searchParams);
    if (bad) return refuse(400, 'Bad Request', bad);
    wss.handleUpgrade(req, socket, head, (ws) => {
      fake.handshakes.push({ query, headers, status: 101 });
      options.onHandshake?.({ query, headers, status: 101 });
      sockets.add(ws);
      const index = fake.connections.length;
      const conn = new Connection(ws, index, query, headers, url.searchParams, script, fake, fault, speechLevel, idleTimeoutMs, changed);
      fake.connections.push(conn.record);
      ws.on('close', () => {
        sockets.delete(ws);
        changed();
      });
      changed();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  (fake as { url: string }).url = `ws://${host}:${address.port}/v1/listen`;
  return fake;
}

function checkUtterance(u: FakeDeepgramUtterance, i: number): { text: string; confidence: number } {
  const item = typeof u === 'string' ? { text: u } : u;
  if (typeof item !== 'object' || item === null || typeof item.text !== 'string')
    throw new RangeError(`script[${i}] must be a string or {text, confidence}`);
  const confidence = item.confidence ?? 0.95;
  if (!(confidence >= 0 && confidence <= 1)) throw new RangeError(`script[${i}].confidence must be 0..1; got ${confidence}`);
  return { text: item.text.trim(), confidence };
}

function queryRecord(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    out[key] = all.length === 1 ? all[0]! : all;
  }
  return out;
}

/** What Deepgram would refuse in the query (400), in plain words; undefined when acceptable. */
function badParams(params: URLSearchParams): string | undefined {
  const encoding = params.get('encoding');
  const rate = params.get('sample_rate');
  if (encoding !== null && !ENCODINGS.includes(encoding)) return `Invalid query string. The encoding "${encoding}" is not supported.`;
  if (encoding !== null && rate === null) return 'Invalid query string. sample_rate is required when encoding is set.';
  if (rate !== null && !(/^\d+$/.test(rate) && Number(rate) >= 8000 && Number(rate) <= 48000))
    return `Invalid query string. sample_rate "${rate}" is not a valid sample rate.`;
  if (encoding !== 'linear16') return 'This fake decodes raw linear16 audio only (set encoding=linear16).';
  const channels = params.get('channels');
  if (channels !== null && channels !== '1') return 'This fake serves mono audio only (channels=1).';
  for (const name of BOOLEAN_PARAMS) {
    const v = params.get(name);
    if (v !== null && v !== 'true' && v !== 'false') return `Invalid query string. ${name} must be true or false.`;
  }
  const endpointing = params.get('endpointing');
  if (endpointing !== null && endpointing !== 'false' && endpointing !== 'true' && !/^\d+$/.test(endpointing))
    return 'Invalid query string. endpointing must be a whole number of ms or false.';
  const ue = params.get('utterance_end_ms');
  if (ue !== null && !/^\d+$/.test(ue)) return 'Invalid query string. utterance_end_ms must be a whole number of ms.';
  return undefined;
}

function errCode(status: number): string {
  if (status === 401) return 'INVALID_AUTH';
  if (status === 403) return 'INSUFFICIENT_PERMISSIONS';
  if (status === 429) return 'TOO_MANY_REQUESTS';
  if (status >= 500) return 'INTERNAL_SERVER_ERROR';
  return 'Bad Request';
}

function errMessage(status: number): string {
  if (status === 401) return 'Invalid credentials.';
  if (status === 403) return 'Project does not have access to the requested model.';
  if (status === 429) return 'Too many requests. Please try again later.';
  if (status >= 500) return 'An internal server error occurred.';
  return 'The request was refused.';
}

/** Writes an HTTP error in place of the 101 and closes the socket. */
function refuseUpgrade(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ err_code: code, err_msg: message, request_id: randomUUID() });
  const reason = http.STATUS_CODES[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\ndg-error: ${message}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** One accepted socket: the energy detector and the message timing. */
class Connection {
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

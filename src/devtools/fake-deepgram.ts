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
 * The streaming protocol of one accepted socket (its energy detector and message timing) is in
 * fake-deepgram-connection.ts; the public types in fake-deepgram-api.ts.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { FakeDeepgram, FakeDeepgramOptions, FakeDeepgramUtterance } from './fake-deepgram-api.js';
import { Connection, type Script } from './fake-deepgram-connection.js';

/** Re-exported: the handle and options every test of the fake uses. */
export type { FakeDeepgram, FakeDeepgramOptions } from './fake-deepgram-api.js';

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

/**
 * A local fake of Sarvam AI's streaming speech-to-text WebSocket (`GET /speech-to-text/ws`), for
 * tests and for trying vagent without a Sarvam account; it speaks Sarvam's exact protocol. On the
 * same port it serves Sarvam's text-to-speech endpoint (`POST /text-to-speech`,
 * ./fake-sarvam-tts.ts).
 *
 * Protocol as in src/adapters/recognizers/sarvam.ts (sources: the `sarvamai` JS SDK 1.1.10 on npm,
 * docs.sarvam.ai streaming API pages, LiveKit's Sarvam plugin):
 * - Upgrade: the path must be `/speech-to-text/ws` (else 404); the `Api-Subscription-Key` header
 *   must equal the fake's key, else HTTP 403 with Sarvam's REST error envelope
 *   `{"error":{"message","code":"invalid_api_key_error","request_id"}}` ("Auth failures use HTTP
 *   403, not 401"); query parameters are checked against the SDK's enumerations
 *   (`language-code` required; `model` saaras:v3|saaras:v4|saarika:v2.5; `mode` only with saaras;
 *   `sample_rate` 8000|16000; `input_audio_codec` wav|pcm_s16le|pcm_l16|pcm_raw; the booleans
 *   `"true"|"false"`), else 400 `invalid_request_error`. Whether the real service refuses a bad
 *   parameter at the upgrade or with an `error` message is not documented; the fake refuses at the upgrade.
 * - Messages in: `{"audio":{"data":<base64>,"sample_rate","encoding"}}` (PCM16LE; a WAV header,
 *   if any, is skipped), `{"type":"flush"}`, `{"type":"config","prompt"}`, `{"type":"end_of_stream"}`.
 *   Anything else gets `{"type":"error","data":{"error","code":"invalid_request_error"}}`.
 * - Messages out: with `vad_signals=true`, `{"type":"events","data":{"signal_type":"START_SPEECH"|
 *   "END_SPEECH","occured_at"}}`; a `{"type":"data","data":{"request_id","transcript",
 *   "timestamps":null,"diarized_transcript":null,"language_code","language_probability":null,
 *   "metrics":{"audio_duration","processing_latency"}}}` after each END_SPEECH and for each flush
 *   (empty transcript when no speech was buffered — an assumption: Sarvam does not document it).
 *   `end_of_stream` closes the socket (1000) once every answer is out.
 *
 * Faults: {@link FakeSarvam.rejectNext} (HTTP status on the next handshakes),
 * {@link FakeSarvam.dropNext} (terminate the next connections after N bytes or N ms of audio
 * received), {@link FakeSarvam.answerDelayMs} (slow answers).
 *
 * One accepted connection (speech detection, the messages in and out) is served by
 * fake-sarvam-connection.ts.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { requestId, serve, type FakeSarvamConnection } from './fake-sarvam-connection.js';
import { FAKE_SARVAM_TTS_PATH, handleSarvamTts } from './fake-sarvam-tts.js';
import { fakeVoice, ttsControls, type FakeTtsControls } from './fake-tts.js';
import type { SpeechSynthesizer } from '../adapters/speech/types.js';

/** The path the fake serves (Sarvam's). */
export const FAKE_SARVAM_PATH = '/speech-to-text/ws';

const LANGUAGES = new Set([
  'unknown',
  'en-IN',
  'hi-IN',
  'bn-IN',
  'gu-IN',
  'kn-IN',
  'ml-IN',
  'mr-IN',
  'od-IN',
  'pa-IN',
  'ta-IN',
  'te-IN',
  'as-IN',
  'ur-IN',
  'ne-IN',
  'kok-IN',
  'ks-IN',
  'sd-IN',
  'sa-IN',
  'sat-IN',
  'mni-IN',
  'brx-IN',
  'mai-IN',
  'doi-IN',
]);
const MODELS = new Set(['saaras:v3', 'saaras:v4', 'saarika:v2.5']);
const MODES = new Set(['transcribe', 'translate', 'verbatim', 'translit', 'codemix']);
const CODECS = new Set(['wav', 'pcm_s16le', 'pcm_l16', 'pcm_raw']);
const RATES = new Set(['8000', '16000']);
const BOOLEANS = ['high_vad_sensitivity', 'vad_signals', 'flush_signal'] as const;
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Options of {@link startFakeSarvam}. */
export interface FakeSarvamOptions {
  /** The key the fake accepts; default `fake-sarvam-key`. */
  apiKey?: string;
  /** Interface; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free one). */
  port?: number;
  /** Transcripts, one per answered segment (Devanagari or Latin script, as Sarvam would write them). */
  script?: readonly string[];
  /** RMS level (PCM16 units) at which a 20 ms frame counts as speech; default 500 (≈ −36 dBFS). */
  speechRms?: number;
  /** Overrides the silence that ends speech, ms of audio. */
  endSilenceMs?: number;
  /** Delay of every answer (data message), ms of wall time; default 0. */
  answerDelayMs?: number;
  /** Called for each accepted connection (e.g. a log line). */
  onConnection?: (c: FakeSarvamConnection) => void;
  /** The engine the text-to-speech endpoint speaks with; default eSpeak NG (closed with the fake). */
  voice?: SpeechSynthesizer;
}

/** A running fake. */
export interface FakeSarvam {
  /** `ws://host:port/speech-to-text/ws`. */
  readonly url: string;
  /** `http://host:port`: the base URL of the text-to-speech API (`VAGENT_SARVAM_TTS_URL`). */
  readonly ttsUrl: string;
  /** The text-to-speech endpoint's requests and faults. */
  readonly tts: FakeTtsControls;
  /** The accepted key. */
  readonly apiKey: string;
  /** Every handshake, in order. */
  readonly connections: FakeSarvamConnection[];
  /** Delay of answers, ms (settable). */
  answerDelayMs: number;
  /** Appends transcripts to the script. */
  enqueue(...transcripts: string[]): void;
  /** Refuses the next `times` handshakes with HTTP `status` (e.g. 403, 429, 500). */
  rejectNext(status: number, times?: number): void;
  /** Terminates the next `times` connections once they have sent `afterBytes` bytes or `afterMs` ms of audio. */
  dropNext(at: { afterBytes?: number; afterMs?: number }, times?: number): void;
  /** Stops the server and ends every connection. */
  close(): Promise<void>;
}

/**
 * Starts the fake on `host:port` (127.0.0.1:0 by default).
 * @throws whatever `listen` throws (e.g. EADDRINUSE)
 */
export async function startFakeSarvam(opts: FakeSarvamOptions = {}): Promise<FakeSarvam> {
  const apiKey = opts.apiKey ?? 'fake-sarvam-key';
  const script = [...(opts.script ?? [])];
  const rejects: number[] = [];
  const drops: Array<{ afterBytes?: number; afterMs?: number }> = [];
  const connections: FakeSarvamConnection[] = [];
  const sockets = new Set<Socket>();
  const wss = new WebSocketServer({ noServer: true });
  const tts = ttsControls();
  const engine = fakeVoice(opts.voice);
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://fake');
    if (u.pathname === FAKE_SARVAM_TTS_PATH) {
      void handleSarvamTts(req, res, u, { apiKey, engine, controls: tts });
      return;
    }
    res
      .writeHead(426, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message: 'this endpoint speaks WebSocket', code: 'invalid_request_error' } }));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const fake: FakeSarvam = {
    url: '',
    ttsUrl: '',
    tts,
    apiKey,
    connections,
    answerDelayMs: opts.answerDelayMs ?? 0,
    enqueue: (...t) => void script.push(...t),
    rejectNext: (status, times = 1) => void rejects.push(...Array<number>(times).fill(status)),
    dropNext: (at, times = 1) => void drops.push(...Array.from({ length: times }, () => ({ ...at }))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        for (const s of sockets) s.destroy();
        wss.close();
        if (!opts.voice) void engine.close();
        server.close(() => resolve());
      }),
  };

  server.on('upgrade', (req, socket: Socket, head) => {
    const u = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(u.searchParams);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (k !== 'api-subscription-key' && k !== 'authorization' && typeof v === 'string') headers[k] = v;
    const conn: FakeSarvamConnection = {
      query,
      headers,
      audioBytes: 0,
      audio: [],
      messages: {},
      transcripts: [],
      dropped: false,
    };
    connections.push(conn);
    const refuse = (status: number, message: string, code: string): void => {
      conn.refused = status;
      const body = JSON.stringify({ error: { message, code, request_id: requestId() } });
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    };
    if (u.pathname !== FAKE_SARVAM_PATH) return refuse(404, `no such endpoint: ${u.pathname}`, 'not_found_error');
    if (req.headers['api-subscription-key'] !== apiKey) return refuse(403, 'Invalid API key', 'invalid_api_key_error');
    const forced = rejects.shift();
    if (forced !== undefined) {
      const code =
        forced === 429
          ? 'rate_limit_exceeded_error'
          : forced === 403
            ? 'invalid_api_key_error'
            : forced >= 500
              ? 'internal_server_error'
              : 'invalid_request_error';
      return refuse(forced, `scripted refusal (${forced})`, code);
    }
    const bad = checkQuery(query);
    if (bad) return refuse(400, bad, 'invalid_request_error');
    wss.handleUpgrade(req, socket, head, (ws) => {
      opts.onConnection?.(conn);
      serve(ws, conn, {
        script,
        drop: drops.shift(),
        speechRms: opts.speechRms ?? 500,
        endSilenceMs: opts.endSilenceMs,
        delay: () => fake.answerDelayMs,
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  (fake as { url: string }).url = `ws://${host}:${addr.port}${FAKE_SARVAM_PATH}`;
  (fake as { ttsUrl: string }).ttsUrl = `http://${host}:${addr.port}`;
  return fake;
}

/** What is wrong with a handshake's query, or undefined. */
function checkQuery(q: Record<string, string>): string | undefined {
  const lang = q['language-code'];
  if (lang === undefined) return 'language-code is required';
  if (!LANGUAGES.has(lang)) return `language-code ${lang} is not supported`;
  const model = q.model ?? 'saaras:v3';
  if (!MODELS.has(model)) return `model ${model} is not supported on this endpoint`;
  if (q.mode !== undefined && (!MODES.has(q.mode) || !model.startsWith('saaras'))) return `mode ${q.mode} is not valid for model ${model}`;
  if (q.sample_rate !== undefined && !RATES.has(q.sample_rate)) return `sample_rate ${q.sample_rate} is not supported`;
  if (q.input_audio_codec !== undefined && !CODECS.has(q.input_audio_codec))
    return `input_audio_codec ${q.input_audio_codec} is not supported`;
  for (const b of BOOLEANS) if (q[b] !== undefined && q[b] !== 'true' && q[b] !== 'false') return `${b} must be true or false`;
  return undefined;
}

/**
 * A local fake of ElevenLabs' text-to-speech API, for tests and for trying vagent's ElevenLabs
 * voices without an account; it speaks ElevenLabs' REST protocol
 * (https://elevenlabs.io/docs/api-reference/text-to-speech/convert):
 * - `POST /v1/text-to-speech/{voice_id}?output_format=pcm_<rate>`, header `xi-api-key` (else
 *   HTTP 401 `{"detail":{"status":"invalid_api_key","message"}}`);
 * - JSON body `{text, model_id?, language_code?, voice_settings?, seed?, …}`; a missing or empty
 *   `text` is a 422 with a list of validation errors `{"detail":[{"loc","msg","type"}]}`, an
 *   unknown `model_id` a 400 `{"detail":{"status":"model_not_found"}}`;
 * - the answer: the audio itself, raw signed 16-bit little-endian mono PCM at the asked rate
 *   (`pcm_8000` … `pcm_48000`), spoken by the embedded engine and resampled to that rate. The
 *   fake speaks only the PCM formats (what vagent asks for): `mp3_*`, `opus_*`, `ulaw_8000` …
 *   are a 400 `{"detail":{"status":"invalid_output_format"}}` here — an assumption of the fake.
 * Faults ({@link FakeTtsControls.failNext}): 500, 429 `too_many_concurrent_requests`, a slow
 * answer, or a 200 whose audio is an odd number of bytes of JSON.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { SpeechSynthesizer } from '../adapters/speech/types.js';
import { fakeVoice, readJson, recordOf, sendJson, speakAt, ttsControls, waitOrClose, type FakeTtsControls } from './fake-tts.js';

const PATH_RE = /^\/v1\/text-to-speech\/([^/]+)$/;
const VOICE_RE = /^[A-Za-z0-9]{1,64}$/;
const RATES = new Set([8000, 16000, 22050, 24000, 32000, 44100, 48000]);
const MODELS = new Set([
  'eleven_v3',
  'eleven_multilingual_v2',
  'eleven_flash_v2_5',
  'eleven_flash_v2',
  'eleven_turbo_v2_5',
  'eleven_turbo_v2',
  'eleven_monolingual_v1',
  'eleven_multilingual_v1',
]);

/** Options of {@link startFakeElevenLabs}. */
export interface FakeElevenLabsOptions {
  /** The key the fake accepts; default `fake-elevenlabs-key`. */
  apiKey?: string;
  /** Interface; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free one). */
  port?: number;
  /** The engine that speaks; default eSpeak NG (closed with the fake). */
  voice?: SpeechSynthesizer;
  /** Called after each request (e.g. a log line), with its path and status; never the key or the text. */
  onRequest?: (path: string, status: number) => void;
}

/** A running fake. */
export interface FakeElevenLabs extends FakeTtsControls {
  /** `http://host:port`: the base URL (`VAGENT_ELEVENLABS_URL`). */
  readonly url: string;
  /** The accepted key. */
  readonly apiKey: string;
  /** Stops the server and ends every connection. */
  close(): Promise<void>;
}

/**
 * Starts the fake on `host:port` (127.0.0.1:0 by default).
 * @throws whatever `listen` throws (e.g. EADDRINUSE)
 */
export async function startFakeElevenLabs(opts: FakeElevenLabsOptions = {}): Promise<FakeElevenLabs> {
  const apiKey = opts.apiKey ?? 'fake-elevenlabs-key';
  const engine = fakeVoice(opts.voice);
  const controls = ttsControls();
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    void handle(req, res, url).catch(() => res.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const body = await readJson(req);
    const record = recordOf(req, url, body, 'xi-api-key', apiKey);
    controls.requests.push(record);
    const done = (status: number): void => {
      record.status = status;
      opts.onRequest?.(url.pathname, status);
    };
    const detail = (status: number, code: string, message: string): void => {
      done(status);
      sendJson(res, status, { detail: { status: code, message } });
    };
    const m = PATH_RE.exec(url.pathname);
    if (!m) return detail(404, 'not_found', `no such endpoint: ${url.pathname}`);
    if (req.method !== 'POST') return detail(405, 'method_not_allowed', 'use POST');
    if (!record.authorized) return detail(401, 'invalid_api_key', 'Invalid API key');
    const fault = controls.nextFault();
    if (fault === 'error500') return detail(500, 'internal_error', 'scripted failure (500)');
    if (fault === 'error429') return detail(429, 'too_many_concurrent_requests', 'scripted rate limit (429)');
    if (fault === 'slow') await waitOrClose(req, controls.slowMs);
    if (res.destroyed) return;
    const voiceId = decodeURIComponent(m[1]!);
    if (!VOICE_RE.test(voiceId)) return detail(404, 'voice_not_found', 'A voice with the voice_id was not found.');
    const format = url.searchParams.get('output_format') ?? 'mp3_44100_128';
    const rate = /^pcm_(\d+)$/.exec(format)?.[1];
    if (rate === undefined || !RATES.has(Number(rate)))
      return detail(400, 'invalid_output_format', `the fake answers pcm_<rate> only, not ${format}`);
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (typeof b.text !== 'string' || b.text.trim() === '') {
      done(422);
      return sendJson(res, 422, { detail: [{ loc: ['body', 'text'], msg: 'Field required', type: 'missing' }] });
    }
    const model = b.model_id ?? 'eleven_multilingual_v2';
    if (typeof model !== 'string' || !MODELS.has(model)) return detail(400, 'model_not_found', 'A model with the model_id was not found.');
    if (fault === 'malformed') {
      done(200);
      res.writeHead(200, { 'content-type': 'audio/pcm' }).end('{"oops":true}'); // 13 bytes: not whole 16-bit samples
      return;
    }
    const language = typeof b.language_code === 'string' ? b.language_code : /[\u0900-\u097f]/.test(b.text) ? 'hi' : 'en';
    try {
      const samples = await speakAt(engine, b.text, language, Number(rate));
      const pcm = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
      done(200);
      res.writeHead(200, { 'content-type': 'audio/pcm', 'content-length': pcm.length }).end(pcm);
    } catch (err) {
      detail(500, 'internal_error', `the fake's engine failed: ${(err as Error).message}`);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return Object.assign(controls, {
    url: `http://${host}:${addr.port}`,
    apiKey,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        if (!opts.voice) void engine.close();
        server.close(() => resolve());
      }),
  });
}

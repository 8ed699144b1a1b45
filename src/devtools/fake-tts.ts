/**
 * What the fakes of the cloud voices share (./fake-sarvam-tts.ts, ./fake-elevenlabs.ts): real
 * audio at the provider's rate, spoken by an embedded engine (eSpeak NG by default; tests may
 * give the tone fake), the scripted faults, the record of requests, and JSON over node:http.
 */
import type http from 'node:http';
import { EspeakSynthesizer, espeakVoiceFor } from '../adapters/speech/espeak.js';
import type { SpeechSynthesizer } from '../adapters/speech/types.js';
import { resampleMono16 } from '../media/wav.js';

/**
 * A scripted fault of the next request: an HTTP 500 or 429 answer, an answer after
 * {@link FakeTtsControls.slowMs}, or a 200 whose audio is malformed.
 */
export type FakeTtsFault = 'error500' | 'error429' | 'slow' | 'malformed';

/** One request a fake received (the API key header left out). */
export interface FakeTtsRequest {
  method: string;
  /** The path, without the query. */
  path: string;
  query: Record<string, string>;
  /** Headers other than the key's. */
  headers: Record<string, string>;
  /** The parsed JSON body, or undefined when it was not JSON. */
  body: unknown;
  /** Whether the key header held the fake's key. */
  authorized: boolean;
  /** The HTTP status answered. */
  status?: number;
}

/** The controls of a running fake's text-to-speech endpoint. */
export interface FakeTtsControls {
  /** Every request, in order. */
  readonly requests: FakeTtsRequest[];
  /** How long a `slow` fault waits before answering, ms (settable); default 10000. */
  slowMs: number;
  /** Makes the next `times` requests fail with `fault`. */
  failNext(fault: FakeTtsFault, times?: number): void;
  /** Drops the faults not used yet. */
  clearFaults(): void;
}

/** The controls and the fault queue behind them. */
export function ttsControls(): FakeTtsControls & { nextFault(): FakeTtsFault | undefined } {
  const faults: FakeTtsFault[] = [];
  return {
    requests: [],
    slowMs: 10_000,
    failNext: (fault, times = 1) => void faults.push(...Array<FakeTtsFault>(times).fill(fault)),
    clearFaults: () => void faults.splice(0),
    nextFault: () => faults.shift(),
  };
}

/** The engine a fake speaks with: the one given, else eSpeak NG (started on first use). */
export function fakeVoice(given?: SpeechSynthesizer): SpeechSynthesizer {
  return given ?? new EspeakSynthesizer();
}

/**
 * `text` spoken by `engine` in the voice for BCP-47 `language`, as mono PCM16 at `rate` Hz
 * (resampled from the engine's rate with wavefile, as the provider's own rate differs from it).
 */
export async function speakAt(engine: SpeechSynthesizer, text: string, language: string, rate: number): Promise<Int16Array> {
  const tag = language.toLowerCase().startsWith('od') ? 'or' : language; // Sarvam's Odia code; eSpeak knows `or`
  const voice = engine.provider === 'espeak-ng' ? espeakVoiceFor(tag) : engine.voiceFor(tag);
  const audio = await engine.synthesize(text, voice, { timeoutMs: 30_000 });
  return resampleMono16(audio.samples, audio.sampleRate, rate);
}

/** Reads a request body of at most `maxBytes` as JSON; undefined when it is not JSON or too long. */
export async function readJson(req: http.IncomingMessage, maxBytes = 1024 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Answers `status` with `body` as JSON. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/** The request as {@link FakeTtsRequest} records it, without the `keyHeader`. */
export function recordOf(req: http.IncomingMessage, url: URL, body: unknown, keyHeader: string, key: string): FakeTtsRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (k !== keyHeader && typeof v === 'string') headers[k] = v;
  return {
    method: req.method ?? '',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body,
    authorized: req.headers[keyHeader] === key,
  };
}

/** Waits `ms`, or until the request's socket closes (a client that gave up). */
export function waitOrClose(req: http.IncomingMessage, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    req.socket.once('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

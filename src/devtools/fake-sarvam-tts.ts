/**
 * The text-to-speech endpoint of the Sarvam fake (./fake-sarvam.ts serves it beside the
 * streaming recogniser, on the same port), speaking Sarvam's REST protocol
 * (https://docs.sarvam.ai/api-reference-docs/text-to-speech/convert):
 * - `POST /text-to-speech`, header `api-subscription-key` (else HTTP 403
 *   `{"error":{"message","code":"invalid_api_key_error","request_id"}}`);
 * - JSON body `{text, target_language_code, speaker?, model?, speech_sample_rate?, pitch?, pace?,
 *   loudness?, enable_preprocessing?}` (the older `inputs: [text]` is taken too), checked against
 *   the documented values (languages, bulbul:v2's speakers, rates 8000/16000/22050/24000,
 *   at most 1500 characters), else 400 `invalid_request_error`;
 * - the answer `{"request_id","audios":[<base64 WAV, mono PCM16 at speech_sample_rate>]}`,
 *   the WAV spoken by the embedded engine and resampled to that rate.
 * Faults ({@link FakeTtsControls.failNext}): 500 `internal_server_error`, 429
 * `rate_limit_exceeded_error`, a slow answer, or a 200 whose `audios` is not a WAV.
 */
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { SpeechSynthesizer } from '../adapters/speech/types.js';
import { toWav } from '../media/wav.js';
import { readJson, recordOf, sendJson, speakAt, waitOrClose, type FakeTtsControls, type FakeTtsFault } from './fake-tts.js';

/** The path of Sarvam's text-to-speech endpoint. */
export const FAKE_SARVAM_TTS_PATH = '/text-to-speech';

const LANGUAGES = new Set(['bn-IN', 'en-IN', 'gu-IN', 'hi-IN', 'kn-IN', 'ml-IN', 'mr-IN', 'od-IN', 'pa-IN', 'ta-IN', 'te-IN']);
const SPEAKERS: Record<string, Set<string>> = {
  'bulbul:v1': new Set(['meera', 'pavithra', 'maitreyi', 'arvind', 'amol', 'amartya', 'diya', 'neel', 'misha', 'vian', 'arjun', 'maya']),
  'bulbul:v2': new Set(['anushka', 'manisha', 'vidya', 'arya', 'abhilash', 'karun', 'hitesh']),
};
const RATES = new Set([8000, 16000, 22050, 24000]);
const MAX_CHARS = 1500;

/** What the handler needs of its fake. */
export interface SarvamTtsContext {
  apiKey: string;
  engine: SpeechSynthesizer;
  controls: FakeTtsControls & { nextFault(): FakeTtsFault | undefined };
}

/** Answers one request to {@link FAKE_SARVAM_TTS_PATH} (any other path is the caller's). */
export async function handleSarvamTts(req: http.IncomingMessage, res: http.ServerResponse, url: URL, ctx: SarvamTtsContext): Promise<void> {
  const body = await readJson(req);
  const record = recordOf(req, url, body, 'api-subscription-key', ctx.apiKey);
  ctx.controls.requests.push(record);
  const answer = (status: number, json: unknown): void => {
    record.status = status;
    sendJson(res, status, json);
  };
  const error = (status: number, code: string, message: string): void =>
    answer(status, { error: { message, code, request_id: randomUUID() } });
  if (req.method !== 'POST') return error(405, 'invalid_request_error', 'use POST');
  if (!record.authorized) return error(403, 'invalid_api_key_error', 'Invalid API key');
  const fault = ctx.controls.nextFault();
  if (fault === 'error500') return error(500, 'internal_server_error', 'scripted failure (500)');
  if (fault === 'error429') return error(429, 'rate_limit_exceeded_error', 'scripted rate limit (429)');
  if (fault === 'slow') await waitOrClose(req, ctx.controls.slowMs);
  if (res.destroyed) return;
  const checked = check(body);
  if (typeof checked === 'string') return error(400, 'invalid_request_error', checked);
  if (fault === 'malformed') return answer(200, { request_id: randomUUID(), audios: [Buffer.from('not a wav file').toString('base64')] });
  try {
    const audios: string[] = [];
    for (const text of checked.texts) {
      const samples = await speakAt(ctx.engine, text, checked.language, checked.rate);
      audios.push(toWav({ samples, sampleRate: checked.rate }).toString('base64'));
    }
    answer(200, { request_id: randomUUID(), audios });
  } catch (err) {
    error(500, 'internal_server_error', `the fake's engine failed: ${(err as Error).message}`);
  }
}

/** The request's texts, language and rate, or what is wrong with the body. */
function check(body: unknown): { texts: string[]; language: string; rate: number } | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object';
  const b = body as Record<string, unknown>;
  const texts = typeof b.text === 'string' ? [b.text] : b.inputs;
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > 3 || !texts.every((t) => typeof t === 'string' && t.trim() !== ''))
    return 'text is required (a non-empty string)';
  if (texts.some((t: string) => [...t].length > MAX_CHARS)) return `text must be at most ${MAX_CHARS} characters`;
  const language = b.target_language_code;
  if (typeof language !== 'string' || !LANGUAGES.has(language)) return `target_language_code must be one of ${[...LANGUAGES].join(', ')}`;
  const model = b.model ?? 'bulbul:v2';
  if (typeof model !== 'string' || !(model in SPEAKERS)) return `model must be one of ${Object.keys(SPEAKERS).join(', ')}`;
  const speaker = b.speaker ?? (model === 'bulbul:v2' ? 'anushka' : 'meera');
  if (typeof speaker !== 'string' || !SPEAKERS[model]!.has(speaker.toLowerCase()))
    return `speaker ${String(speaker)} is not a voice of ${model}`;
  const rate = b.speech_sample_rate ?? 22050;
  if (typeof rate !== 'number' || !RATES.has(rate)) return `speech_sample_rate must be one of ${[...RATES].join(', ')}`;
  return { texts: texts as string[], language, rate };
}

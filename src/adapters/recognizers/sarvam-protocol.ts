/**
 * Sarvam AI's streaming speech-to-text wire protocol, the parts that are plain data: the
 * endpoint and defaults, the languages served, the handshake URL of a stream, the
 * `end_of_stream` message and what a refused handshake means. A stream's socket and state are
 * in ./sarvam-stream.ts; the recogniser in ./sarvam.ts.
 *
 * Wire protocol (the legacy-named "Streaming API", `GET /speech-to-text/ws`), as read from the
 * official JS SDK `sarvamai` 1.1.10 on npm — `dist/cjs/api/resources/speechToTextStreaming/client/
 * Client.js` (query parameters, header), `…/client/Socket.js` (`transcribe`, `flush`),
 * `dist/cjs/api/types/{AudioData,SttFlushSignal,SpeechToTextStreamingResponse,
 * SpeechToTextTranscriptionData,EventsData,ErrorData,ResponseType}.d.ts` (message shapes) — and
 * the docs https://docs.sarvam.ai/api-reference-docs/speech-to-text/transcribe/ws and
 * https://docs.sarvam.ai/api-reference-docs/api-guides-tutorials/speech-to-text/streaming-api:
 * - Handshake: `wss://api.sarvam.ai/speech-to-text/ws?language-code=hi-IN&model=saaras:v3&mode=codemix
 *   &sample_rate=16000&input_audio_codec=pcm_s16le&high_vad_sensitivity=true&vad_signals=true
 *   &flush_signal=true` with the header `Api-Subscription-Key: <key>` (the key is never put in
 *   the URL). Authentication failures are HTTP 403 `invalid_api_key_error`; 429 is
 *   `rate_limit_exceeded_error`/`insufficient_quota_error`
 *   (https://docs.sarvam.ai/api-reference-docs/errors-troubleshooting). 401 is treated like 403.
 * - Client → server (JSON text frames): `{"audio":{"data":<base64 PCM16LE>,"sample_rate":16000,
 *   "encoding":"audio/wav"}}` (the SDK types `sample_rate` as a number and `encoding` as the
 *   literal `"audio/wav"`, raw PCM being declared by `input_audio_codec`; the brief's string
 *   `"16000"` was not followed); `{"type":"flush"}` (SttFlushSignal); and, when done with the
 *   socket, `{"type":"end_of_stream","audio":{"data":"",…}}` — not in the JS SDK; its shape is the
 *   one LiveKit's Sarvam plugin sends (livekit/agents-js `plugins/sarvam/src/stt.ts`: "end_of_stream
 *   includes an empty audio field to avoid 'audio must not be None' rejection").
 * - Server → client: `{"type":"data","data":{"request_id","transcript","language_code",
 *   "language_probability","metrics":{"audio_duration","processing_latency"}}}`,
 *   `{"type":"events","data":{"signal_type":"START_SPEECH"|"END_SPEECH","occured_at"}}` (with
 *   `vad_signals=true`) and `{"type":"error","data":{"error"|"message","code"}}`. The server sends
 *   no interim transcripts on this endpoint (docs: "Interim results: None; only a final transcript
 *   per utterance"), so {@link SarvamRecognizer.emitsPartials} is false. A transcript follows its
 *   END_SPEECH (sarvamai/skills `test-sarvam-voice/tests/fixtures/protocol-events.json`).
 * - Model and mode: the SDK lists `saaras:v3` (default) and `saaras:v4` for this endpoint, `mode`
 *   one of transcribe, translate, verbatim, translit, codemix, "only applicable" to saaras models;
 *   `saarika:v2.5` is legacy (no `mode`). Default here: `saaras:v3` with `mode=codemix` (English
 *   words in Latin script, Indic words in their own script: what Hinglish callers say).
 */
import type { ConnectFailure } from './cloud-socket.js';

/** Sarvam's streaming endpoint (SDK `SarvamAIEnvironment.Production.production` + `/speech-to-text/ws`). */
export const SARVAM_DEFAULT_URL = 'wss://api.sarvam.ai/speech-to-text/ws';
/** Default model: `saaras:v3`, the SDK's default for this endpoint. */
export const SARVAM_DEFAULT_MODEL = 'saaras:v3';
/** Default mode for saaras models: code-mixed output for Hinglish. */
export const SARVAM_DEFAULT_MODE = 'codemix';
/**
 * Languages served by default: the eleven of saarika:v2.5 and the Sarvam docs' core list (SDK
 * `SpeechToTextStreamingLanguageCode` lists more for saaras:v3; pass `languages` to use them).
 * Sarvam spells Odia `od-IN`.
 */
export const SARVAM_LANGUAGES = [
  'hi-IN',
  'bn-IN',
  'ta-IN',
  'te-IN',
  'kn-IN',
  'ml-IN',
  'mr-IN',
  'gu-IN',
  'pa-IN',
  'od-IN',
  'en-IN',
] as const;
/** The rate audio is sent at, Hz (docs: "PCM files are supported only at 16kHz"). */
export const SARVAM_SAMPLE_RATE = 16000;
/** Audio per message, ms (the Sarvam skill's advice: chunks of 100–500 ms). */
export const CHUNK_MS = 100;
/** Default wait for the handshake, ms. */
export const SARVAM_CONNECT_TIMEOUT_MS = 3000;
/** Wait before retrying a handshake answered 429, ms. */
const RATE_LIMIT_RETRY_MS = 250;

/** The `end_of_stream` message (its empty audio field: see the module doc), as sent. */
export const END_OF_STREAM_MESSAGE = JSON.stringify({
  type: 'end_of_stream',
  audio: { data: '', sample_rate: SARVAM_SAMPLE_RATE, encoding: 'audio/wav' },
});

/**
 * The handshake URL of one stream: `url` with the query parameters of the SDK's
 * `SpeechToTextStreamingClient.connect` (`mode` only for saaras models).
 */
export function streamUrl(url: string, p: { language: string; model: string; mode?: string }): string {
  const u = new URL(url);
  u.searchParams.set('language-code', p.language);
  u.searchParams.set('model', p.model);
  if (p.mode && p.model.startsWith('saaras')) u.searchParams.set('mode', p.mode);
  u.searchParams.set('sample_rate', String(SARVAM_SAMPLE_RATE));
  u.searchParams.set('input_audio_codec', 'pcm_s16le');
  u.searchParams.set('high_vad_sensitivity', 'true');
  u.searchParams.set('vad_signals', 'true');
  u.searchParams.set('flush_signal', 'true');
  return u.toString();
}

/** What a refused handshake means (https://docs.sarvam.ai/api-reference-docs/errors-troubleshooting). */
export function sarvamHandshakeFailure(status: number): ConnectFailure {
  if (status === 401 || status === 403)
    return {
      kind: 'unavailable',
      message: `Sarvam rejected the API subscription key (${status}); check SARVAM_API_KEY`,
      retry: false,
    };
  if (status === 429)
    return {
      kind: 'unavailable',
      message: 'Sarvam is rate limiting this API key or its credits are used up (429)',
      retry: true,
      delayMs: RATE_LIMIT_RETRY_MS,
    };
  if (status >= 500) return { kind: 'unavailable', message: `Sarvam could not take the stream (HTTP ${status})`, retry: true };
  return {
    kind: 'unavailable',
    message: `Sarvam refused the stream (HTTP ${status}); check the model, mode and language settings`,
    retry: false,
  };
}

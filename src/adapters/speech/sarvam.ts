/**
 * Sarvam AI's bulbul voices (Hindi and ten more Indian languages) behind the
 * `SpeechSynthesizer` interface (docs/architecture.md "Speech and the audio cache").
 *
 * Protocol (https://docs.sarvam.ai/api-reference-docs/text-to-speech/convert):
 * `POST {base}/text-to-speech` with the header `api-subscription-key` and the JSON body
 * `{text, target_language_code, speaker, model, speech_sample_rate}`; the answer is
 * `{request_id, audios: [<base64 WAV>]}`. Errors answer `{error: {message, code, request_id}}`
 * (an unknown key: HTTP 403 `invalid_api_key_error`; too many requests: 429). bulbul:v2 takes at
 * most 1500 characters and answers at 8000, 16000, 22050 or 24000 Hz.
 *
 * The WAV is decoded to mono PCM16 (`decodeWavMono16`, wavefile) at its own rate; the speech
 * service resamples it to the cache's 48 kHz (`toWav48k`).
 */
import { CloudSynthesizer } from './cloud-http.js';
import { SpeechError, type SynthesizedAudio, type SynthesizeOptions } from './types.js';
import { sarvamLanguageOf, voiceIdOf } from '../../domain/voice.js';

/** Sarvam's API. */
export const SARVAM_TTS_DEFAULT_URL = 'https://api.sarvam.ai';
/** The rate asked of Sarvam, Hz: its highest for bulbul:v2, exactly half the cache's. */
export const SARVAM_TTS_SAMPLE_RATE = 24_000;
/** Most characters of one request (bulbul:v2). */
export const SARVAM_MAX_CHARS = 1500;

/** Options of {@link SarvamSynthesizer}. */
export interface SarvamSynthesizerOptions {
  /** The API subscription key (env `SARVAM_API_KEY`); a secret, never shown. */
  apiKey: string;
  /** Base URL of the API; default {@link SARVAM_TTS_DEFAULT_URL} (a fake's, in tests). */
  baseUrl?: string;
  /** `speech_sample_rate` asked for, Hz; default {@link SARVAM_TTS_SAMPLE_RATE}. */
  sampleRate?: number;
}

/** Sarvam text-to-speech over HTTPS: one request per clip. */
export class SarvamSynthesizer extends CloudSynthesizer {
  private readonly sampleRate: number;

  /** @param options the key, base URL and sample rate; see {@link SarvamSynthesizerOptions} */
  constructor(options: SarvamSynthesizerOptions) {
    super({
      provider: 'sarvam',
      label: 'Sarvam',
      apiKey: options.apiKey,
      keyHeader: 'api-subscription-key',
      baseUrl: options.baseUrl ?? SARVAM_TTS_DEFAULT_URL,
      errorCode: (json) => (json as { error?: { code?: unknown } } | null)?.error?.code,
    });
    this.sampleRate = options.sampleRate ?? SARVAM_TTS_SAMPLE_RATE;
  }

  /** The voice id of Sarvam's default speaker and model for `language` (`sarvam/bulbul:v2/anushka/hi-IN`). */
  voiceFor(language: string): string {
    return voiceIdOf({ provider: 'sarvam' }, language);
  }

  /**
   * Speaks `text` with the Sarvam voice id `voice` (`sarvam/<model>/<speaker>/<language>`).
   *
   * @returns mono PCM16 at the rate Sarvam answered with
   * @throws SpeechError 'failed' for a voice id that is not Sarvam's (`bad_voice`), a language
   *         bulbul lacks (`unsupported_language`), a text over {@link SARVAM_MAX_CHARS}
   *         (`too_long`), an error answer (`http_<status>`) or audio that is not a WAV
   *         (`bad_audio`); 'timeout'; 'unavailable' (unreachable, or closed)
   */
  async synthesize(text: string, voice: string, opts: SynthesizeOptions = {}): Promise<SynthesizedAudio> {
    const ref = this.voiceRef(voice);
    const language = sarvamLanguageOf(ref.language);
    if (language === null) throw new SpeechError(`Sarvam has no voice for ${ref.language}`, 'failed', 'unsupported_language');
    if ([...text].length > SARVAM_MAX_CHARS)
      throw new SpeechError(`the text is longer than Sarvam's ${SARVAM_MAX_CHARS} characters`, 'failed', 'too_long');
    const answer = await this.post(
      `${this.base}/text-to-speech`,
      { text, target_language_code: language, speaker: ref.voice, model: ref.model, speech_sample_rate: this.sampleRate },
      'application/json',
      opts,
    );
    return this.decodeAnswer(answer.body);
  }

  /** The audio of Sarvam's answer: every WAV of `audios`, decoded and joined. */
  private decodeAnswer(body: Buffer): SynthesizedAudio {
    let audios: unknown;
    try {
      audios = (JSON.parse(body.toString('utf8')) as { audios?: unknown } | null)?.audios;
    } catch {
      throw new SpeechError('Sarvam answered something that is not JSON', 'failed', 'bad_audio');
    }
    if (!Array.isArray(audios) || audios.length === 0 || !audios.every((a) => typeof a === 'string' && a !== ''))
      throw new SpeechError('Sarvam answered without audio', 'failed', 'bad_audio');
    const parts = (audios as string[]).map((a) => this.decodeWav(Buffer.from(a, 'base64')));
    const rate = parts[0]!.sampleRate;
    if (parts.some((p) => p.sampleRate !== rate)) throw this.badWav('the WAVs differ in sample rate');
    if (parts.length === 1) return parts[0]!;
    const samples = new Int16Array(parts.reduce((n, p) => n + p.samples.length, 0));
    let at = 0;
    for (const p of parts) {
      samples.set(p.samples, at);
      at += p.samples.length;
    }
    return { samples, sampleRate: rate };
  }
}

/**
 * ElevenLabs voices behind the `SpeechSynthesizer` interface (docs/architecture.md "Speech and
 * the audio cache").
 *
 * Protocol (https://elevenlabs.io/docs/api-reference/text-to-speech/convert):
 * `POST {base}/v1/text-to-speech/{voice_id}?output_format=pcm_24000` with the header
 * `xi-api-key` and the JSON body `{text, model_id}`; the answer is the audio itself. vagent asks
 * for `pcm_<rate>` — raw signed 16-bit little-endian mono samples — so no codec (MP3, Opus) has
 * to be decoded; 24 kHz is within every plan (44.1 kHz needs a Pro plan). Errors answer
 * `{detail: {status, message}}` (an unknown key: HTTP 401 `invalid_api_key`) or, for a
 * malformed request, 422 with a list of validation errors.
 *
 * A WAV answer (RIFF) is decoded too (`decodeWavMono16`); the speech service resamples either
 * to the cache's 48 kHz (`toWav48k`).
 */
import { CloudSynthesizer } from './cloud-http.js';
import { SpeechError, type SynthesizedAudio, type SynthesizeOptions } from './types.js';

/** ElevenLabs' API. */
export const ELEVENLABS_DEFAULT_URL = 'https://api.elevenlabs.io';
/** The PCM rate asked of ElevenLabs, Hz (`output_format=pcm_24000`). */
export const ELEVENLABS_SAMPLE_RATE = 24_000;
/** Rates ElevenLabs answers raw PCM at (`pcm_<rate>`), Hz. */
export const ELEVENLABS_PCM_RATES = [8000, 16000, 22050, 24000, 32000, 44100, 48000] as const;

/** Options of {@link ElevenLabsSynthesizer}. */
export interface ElevenLabsSynthesizerOptions {
  /** The API key (env `ELEVENLABS_API_KEY`); a secret, never shown. */
  apiKey: string;
  /** Base URL of the API; default {@link ELEVENLABS_DEFAULT_URL} (a fake's, in tests). */
  baseUrl?: string;
  /** PCM rate asked for, Hz, one of {@link ELEVENLABS_PCM_RATES}; default {@link ELEVENLABS_SAMPLE_RATE}. */
  sampleRate?: number;
}

/** ElevenLabs text-to-speech over HTTPS: one request per clip. */
export class ElevenLabsSynthesizer extends CloudSynthesizer {
  private readonly sampleRate: number;

  /**
   * @param options the key, base URL and rate; see {@link ElevenLabsSynthesizerOptions}
   * @throws RangeError for a rate ElevenLabs does not answer PCM at
   */
  constructor(options: ElevenLabsSynthesizerOptions) {
    super({
      provider: 'elevenlabs',
      label: 'ElevenLabs',
      apiKey: options.apiKey,
      keyHeader: 'xi-api-key',
      baseUrl: options.baseUrl ?? ELEVENLABS_DEFAULT_URL,
      errorCode: (json) => (json as { detail?: { status?: unknown } } | null)?.detail?.status,
    });
    this.sampleRate = options.sampleRate ?? ELEVENLABS_SAMPLE_RATE;
    if (!(ELEVENLABS_PCM_RATES as readonly number[]).includes(this.sampleRate))
      throw new RangeError(`ElevenLabs answers PCM at ${ELEVENLABS_PCM_RATES.join(', ')} Hz, not ${this.sampleRate}`);
  }

  /** ElevenLabs has no default voice: an agent names one (`voice_id`); this returns the embedded-style tag. */
  voiceFor(language: string): string {
    return language;
  }

  /**
   * Speaks `text` with the ElevenLabs voice id `voice` (`elevenlabs/<model>/<voice_id>/<language>`).
   *
   * @returns mono PCM16 at the asked rate (or a WAV answer's)
   * @throws SpeechError 'failed' for a voice id that is not ElevenLabs' (`bad_voice`), an error
   *         answer (`http_<status>`) or audio that is not PCM16 (`bad_audio`); 'timeout';
   *         'unavailable' (unreachable, or closed)
   */
  async synthesize(text: string, voice: string, opts: SynthesizeOptions = {}): Promise<SynthesizedAudio> {
    const ref = this.voiceRef(voice);
    const url = `${this.base}/v1/text-to-speech/${encodeURIComponent(ref.voice)}?output_format=pcm_${this.sampleRate}`;
    const answer = await this.post(url, { text, model_id: ref.model }, 'audio/pcm, audio/wav', opts);
    return this.decode(answer.body, answer.contentType);
  }

  /** The samples of an answer: raw PCM16LE at the asked rate, or a WAV. */
  private decode(body: Buffer, contentType: string): SynthesizedAudio {
    if (body.subarray(0, 4).toString('latin1') === 'RIFF') return this.decodeWav(body);
    if (contentType.includes('json') || contentType.startsWith('text/'))
      throw new SpeechError(`ElevenLabs answered ${contentType.split(';')[0]} instead of audio`, 'failed', 'bad_audio');
    if (body.length === 0 || body.length % 2 !== 0)
      throw new SpeechError(`ElevenLabs answered ${body.length} bytes, not whole 16-bit samples`, 'failed', 'bad_audio');
    const samples = new Int16Array(body.length / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = body.readInt16LE(i * 2);
    return { samples, sampleRate: this.sampleRate };
  }
}

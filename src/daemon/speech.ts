/**
 * The daemon's speech (docs/architecture.md "Speech and the audio cache"): the embedded eSpeak NG engine in a child process in
 * front of the audio cache of the state dir, or none when it is switched off or not installed;
 * beside it, the cloud voices whose API key is set (Sarvam, ElevenLabs).
 */
import { statePaths } from '../config/paths.js';
import type { Settings } from '../config/schema.js';
import { ElevenLabsSynthesizer } from '../adapters/speech/elevenlabs.js';
import { SarvamSynthesizer } from '../adapters/speech/sarvam.js';
import type { SpeechSynthesizer } from '../adapters/speech/types.js';
import { loadAudioKey } from './state-dir.js';
import { AudioCache, type AudioCacheOptions } from '../adapters/speech/cache.js';
import { EspeakSynthesizer } from '../adapters/speech/espeak.js';
import { SpeechService, type FallbackNotice } from '../adapters/speech/synthesis.js';

/**
 * The cloud voices the settings enable: each provider whose API key is set (from the
 * environment or the config file), at its base URL. The keys stay inside the adapters.
 */
export function cloudVoices(settings: Pick<Settings, 'sarvam' | 'elevenlabs'>): SpeechSynthesizer[] {
  const voices: SpeechSynthesizer[] = [];
  const { sarvam, elevenlabs } = settings;
  if (sarvam.api_key)
    voices.push(new SarvamSynthesizer({ apiKey: sarvam.api_key, ...(sarvam.tts_url ? { baseUrl: sarvam.tts_url } : {}) }));
  if (elevenlabs.api_key)
    voices.push(new ElevenLabsSynthesizer({ apiKey: elevenlabs.api_key, ...(elevenlabs.url ? { baseUrl: elevenlabs.url } : {}) }));
  return voices;
}

/** What {@link openSpeech} gives: the service, or null with the reason there is none. */
export type OpenedSpeech = { speech: SpeechService; reason?: undefined } | { speech: null; reason: string };

/**
 * Opens speech for a daemon: the cache `<state-dir>/audio`, its clips named under the
 * install's audio secret `<state-dir>/audio.key` (created 0600 on first use).
 *
 * @param mode      the `speech` setting
 * @param stateDir  the state dir (already created)
 * @param timeoutMs time limit of one live synthesis, ms
 * @param cache     the cap on dynamic clips and their keep window (docs/api-decisions.md "Audio URLs"); default no cap
 * @param cloud     the cloud voices ({@link cloudVoices}); closed here when speech is off or unavailable
 * @param onFallback told when a cloud voice failed and the embedded voice spoke instead (rate-limited per provider and reason)
 * @throws StateDirError when `audio.key` is readable by group or others, or malformed
 */
export async function openSpeech(
  mode: 'embedded' | 'off',
  stateDir: string,
  timeoutMs: number,
  cache: AudioCacheOptions = {},
  cloud: readonly SpeechSynthesizer[] = [],
  onFallback?: (notice: FallbackNotice) => void,
): Promise<OpenedSpeech> {
  const opened = await openEmbedded(mode, stateDir, timeoutMs, cache, cloud, onFallback);
  if (opened.speech === null) await Promise.all(cloud.map((c) => c.close()));
  return opened;
}

async function openEmbedded(
  mode: 'embedded' | 'off',
  stateDir: string,
  timeoutMs: number,
  cache: AudioCacheOptions,
  cloud: readonly SpeechSynthesizer[],
  onFallback: ((notice: FallbackNotice) => void) | undefined,
): Promise<OpenedSpeech> {
  if (mode === 'off') return { speech: null, reason: 'speech is off (setting speech: off)' };
  if (!(await EspeakSynthesizer.available())) {
    return {
      speech: null,
      reason: 'the embedded speech engine (@echogarden/espeak-ng-emscripten, an optional dependency) is not installed',
    };
  }
  const audio = new AudioCache(statePaths(stateDir).audio, loadAudioKey(stateDir), cache);
  return { speech: new SpeechService(new EspeakSynthesizer(), audio, { timeoutMs, cloud, ...(onFallback ? { onFallback } : {}) }) };
}

/**
 * The daemon's speech (docs/architecture.md "Speech and the audio cache"): the embedded eSpeak NG engine in a child process in
 * front of the audio cache of the state dir, or none when it is switched off or not installed.
 */
import { statePaths } from '../config/paths.js';
import { loadAudioKey } from './state-dir.js';
import { AudioCache, type AudioCacheOptions } from '../adapters/speech/cache.js';
import { EspeakSynthesizer } from '../adapters/speech/espeak.js';
import { SpeechService } from '../adapters/speech/synthesis.js';

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
 * @throws StateDirError when `audio.key` is readable by group or others, or malformed
 */
export async function openSpeech(
  mode: 'embedded' | 'off',
  stateDir: string,
  timeoutMs: number,
  cache: AudioCacheOptions = {},
): Promise<OpenedSpeech> {
  if (mode === 'off') return { speech: null, reason: 'speech is off (setting speech: off)' };
  if (!(await EspeakSynthesizer.available())) {
    return {
      speech: null,
      reason: 'the embedded speech engine (@echogarden/espeak-ng-emscripten, an optional dependency) is not installed',
    };
  }
  const audio = new AudioCache(statePaths(stateDir).audio, loadAudioKey(stateDir), cache);
  return { speech: new SpeechService(new EspeakSynthesizer(), audio, { timeoutMs }) };
}

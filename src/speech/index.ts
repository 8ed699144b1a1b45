/**
 * The daemon's speech (DESIGN.md §2): the embedded eSpeak NG engine in a child process in
 * front of the audio cache of the state dir, or none when it is switched off or not installed.
 */
import { AudioCache } from './cache.js';
import { EspeakSynthesizer } from './espeak.js';
import { SpeechService } from './synthesis.js';

/** What {@link openSpeech} gives: the service, or null with the reason there is none. */
export type OpenedSpeech = { speech: SpeechService; reason?: undefined } | { speech: null; reason: string };

/**
 * Opens speech for a daemon.
 * @param mode     the `speech` setting
 * @param audioDir `<state-dir>/audio`
 */
export async function openSpeech(mode: 'embedded' | 'off', audioDir: string, timeoutMs: number): Promise<OpenedSpeech> {
  if (mode === 'off') return { speech: null, reason: 'speech is off (setting speech: off)' };
  if (!(await EspeakSynthesizer.available())) {
    return { speech: null, reason: 'the embedded speech engine (@echogarden/espeak-ng-emscripten, an optional dependency) is not installed' };
  }
  return { speech: new SpeechService(new EspeakSynthesizer(), new AudioCache(audioDir), { timeoutMs }) };
}

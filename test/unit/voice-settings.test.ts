/**
 * The cloud voices' settings (README "Settings"): keys and base URLs from the environment, a
 * provider on only when its key is set, and a bad base URL refused naming the variable — never
 * the key.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadSettings } from '../../src/config/load.js';
import { cloudVoices } from '../../src/daemon/speech.js';

const KEY = 'xi_settings_secret_123456';

describe('cloud voice settings', () => {
  it('reads ELEVENLABS_API_KEY, VAGENT_ELEVENLABS_URL, SARVAM_API_KEY and VAGENT_SARVAM_TTS_URL', () => {
    const s = loadSettings(
      { stateDir: '/tmp/vagent-voice-settings' },
      {
        ELEVENLABS_API_KEY: KEY,
        VAGENT_ELEVENLABS_URL: 'http://127.0.0.1:9100',
        SARVAM_API_KEY: 'sk_x',
        VAGENT_SARVAM_TTS_URL: 'http://127.0.0.1:9200',
      },
    );
    expect(s.elevenlabs).toEqual({ api_key: KEY, url: 'http://127.0.0.1:9100' });
    expect(s.sarvam).toMatchObject({ api_key: 'sk_x', tts_url: 'http://127.0.0.1:9200' });
    expect(cloudVoices(s).map((v) => v.provider)).toEqual(['sarvam', 'elevenlabs']);
    expect(JSON.stringify(cloudVoices(s))).not.toContain(KEY);
  });

  it('enables no cloud voice without a key', () => {
    const s = loadSettings({ stateDir: '/tmp/vagent-voice-settings' }, { VAGENT_ELEVENLABS_URL: 'https://api.elevenlabs.io' });
    expect(cloudVoices(s)).toEqual([]);
  });

  it('refuses a base URL that is not http(s), naming the variable and not the key', () => {
    let err: unknown;
    try {
      loadSettings({ stateDir: '/tmp/vagent-voice-settings' }, { ELEVENLABS_API_KEY: KEY, VAGENT_ELEVENLABS_URL: 'ftp://example.com' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      /elevenlabs\.url: must start with https:\/\/ or http:\/\/ \(from environment VAGENT_ELEVENLABS_URL\)/,
    );
    expect((err as Error).message).not.toContain(KEY);
  });
});

/**
 * Cloud voices through a real `vagent serve` (docs/agents.md "Voice"), as an operator would run
 * it with `npm run fake-elevenlabs`/`fake-sarvam`: the keys and base URLs from the environment,
 * the start-up line naming the voices, an ElevenLabs agent's replies as 48 kHz WAVs spoken
 * through the fake, a failing provider's clip spoken by the embedded voice and traced — and the
 * keys in no response and no line the daemon printed, at log level trace.
 */
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { startFakeElevenLabs } from '../../src/devtools/fake-elevenlabs.js';
import { startFakeSarvam } from '../../src/devtools/fake-sarvam.js';
import { readWavInfo } from '../../src/media/wav.js';
import { adminKey, api, cleanupAll, requireBuild, startDaemon } from '../support/daemon.js';

afterAll(cleanupAll);

describe('cloud voices in a running daemon', () => {
  it('speaks through ElevenLabs, falls back per clip with a trace step, and never shows a key', { timeout: 90_000 }, async () => {
    requireBuild();
    const elKey = `xi${crypto.randomBytes(14).toString('hex')}`;
    const svKey = `sv${crypto.randomBytes(14).toString('hex')}`;
    const eleven = await startFakeElevenLabs({ apiKey: elKey, voice: new FakeSynthesizer({ msPerChar: 5 }) });
    const sarvam = await startFakeSarvam({ apiKey: svKey, voice: new FakeSynthesizer({ msPerChar: 5 }) });
    const printed: string[] = [];
    try {
      const d = await startDaemon({
        env: {
          VAGENT_LOG_LEVEL: 'trace',
          ELEVENLABS_API_KEY: elKey,
          VAGENT_ELEVENLABS_URL: eleven.url,
          SARVAM_API_KEY: svKey,
          VAGENT_SARVAM_TTS_URL: sarvam.ttsUrl,
        },
      });
      await d.waitForOutput(/Cloud voices: sarvam, elevenlabs/);
      const key = await adminKey(d.stateDir);
      const responses: string[] = [];
      const call = async (method: string, route: string, body?: unknown) => {
        const r = await api(d, method, route, { key, ...(body === undefined ? {} : { body }) });
        responses.push(JSON.stringify(r.body));
        return r;
      };
      const def = (await call('GET', '/v1/agents/ag_clinic_booking')).body.definition as Record<string, unknown>;
      const put = await call('PUT', '/v1/agents/ag_clinic_eleven', {
        ...def,
        id: 'ag_clinic_eleven',
        voice: { provider: 'elevenlabs', voice_id: 'JBFqnCBsd6RMkjVDRZzb' },
      });
      expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);

      const s = (await call('POST', '/v1/sessions', { agent_id: 'ag_clinic_eleven' })).body;
      const url = s.opening.clips[0].audio_url as string;
      const wav = Buffer.from(await (await fetch(url)).arrayBuffer());
      expect(readWavInfo(wav)).toMatchObject({ sampleRate: 48_000, channels: 1, bitsPerSample: 16 });
      expect(eleven.requests.length).toBeGreaterThan(0);
      expect(eleven.requests.every((r) => r.authorized && r.query.output_format === 'pcm_24000')).toBe(true);

      eleven.failNext('error429', 20);
      const turn = (await call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'My name is Kavya Menon' })).body;
      eleven.clearFaults();
      const tts = (turn.trace.steps as Array<Record<string, unknown>>).filter((x) => x.layer === 'tts');
      expect(tts.length).toBeGreaterThan(0);
      expect(tts[0]).toEqual({ layer: 'tts', result: 'miss', detail: 'fallback:elevenlabs:http_429' });
      expect(turn.audio_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/audio\/[0-9a-f]{64}\.wav$/);
      expect(turn.cost.tts_inr).toBe(0); // the embedded voice spoke it: free

      await d.stop('SIGTERM');
      printed.push(d.stdout(), d.stderr());
      for (const secret of [elKey, svKey]) {
        for (const r of responses) expect(r.includes(secret), `${secret.slice(0, 6)}… in a response`).toBe(false);
        for (const p of printed) expect(p.includes(secret), `${secret.slice(0, 6)}… printed`).toBe(false);
      }
    } finally {
      await Promise.all([eleven.close(), sarvam.close()]);
    }
  });
});

/**
 * Cloud voices through a real `vagent serve` (docs/agents.md "Voice"), as an operator would run
 * it with `npm run fake-elevenlabs`/`fake-sarvam`: the keys and base URLs from the environment,
 * the start-up line naming the voices, an ElevenLabs agent's replies as 48 kHz WAVs spoken
 * through the fake, a failing provider's clip spoken by the embedded voice and traced — and the
 * keys in no response and no line the daemon printed, at log level trace. A cloud voice that
 * fails is named with its reason and fix by `vagent agent apply` (no key on the daemon, a refused
 * key), `vagent agent show` prints the voice, and the daemon logs one warn line per provider and
 * reason however many clips fail.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { startFakeElevenLabs } from '../../src/devtools/fake-elevenlabs.js';
import { startFakeSarvam } from '../../src/devtools/fake-sarvam.js';
import { readWavInfo } from '../../src/media/wav.js';
import { ROOT, adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, tempDir } from '../support/daemon.js';

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

  it('apply says why a cloud voice failed, show prints the voice, and the daemon warns once per reason', { timeout: 90_000 }, async () => {
    requireBuild();
    const svKey = `sv${crypto.randomBytes(14).toString('hex')}`;
    const sarvam = await startFakeSarvam({ apiKey: 'the_right_key', voice: new FakeSynthesizer({ msPerChar: 1 }) });
    try {
      // Sarvam's key is wrong (the fake answers 403); ElevenLabs has none.
      const d = await startDaemon({ env: { VAGENT_LOG_LEVEL: 'warn', SARVAM_API_KEY: svKey, VAGENT_SARVAM_TTS_URL: sarvam.ttsUrl } });
      await d.waitForOutput(/Cloud voices: sarvam\b/);
      const env = { VAGENT_URL: d.url, VAGENT_API_KEY: await adminKey(d.stateDir) };
      const clinic = fs.readFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), 'utf8');
      const dir = tempDir();
      const file = (id: string, voice: string): string => {
        const f = path.join(dir, `${id}.yaml`);
        fs.writeFileSync(f, `${clinic.replace(/^id: ag_clinic_booking$/m, `id: ${id}`)}\nvoice: ${voice}\n`);
        return f;
      };

      const el = await runCli(['agent', 'apply', '-f', file('ag_clinic_el', '{ provider: elevenlabs, voice_id: JBFqnCBsd6RMkjVDRZzb }')], {
        env,
        timeoutMs: 60_000,
      });
      expect(el.code, el.stderr).toBe(0);
      expect(el.stderr).toMatch(
        /ag_clinic_el\.yaml:\d+:\d+: warning: voice\.provider: elevenlabs has no API key on the daemon \(set ELEVENLABS_API_KEY\)/,
      );
      expect(el.stdout).toMatch(/\d+ failed/);

      const sv = await runCli(['agent', 'apply', '-f', file('ag_clinic_sv', '{ provider: sarvam, speaker: vidya }')], {
        env,
        timeoutMs: 60_000,
      });
      expect(sv.code, sv.stderr).toBe(0);
      expect(sv.stderr).toMatch(
        /ag_clinic_sv\.yaml:\d+:\d+: warning: voice: sarvam refused the API key \(HTTP 403; check SARVAM_API_KEY\)/,
      );
      expect(sv.stdout).toMatch(/\d+ failed/);

      const bad = await runCli(['agent', 'apply', '-f', file('ag_clinic_nobody', '{ provider: sarvam, speaker: nobody }')], { env });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/voice\.speaker: nobody is not a speaker of Sarvam's bulbul:v2; its speakers are anushka, /);

      const show = await runCli(['agent', 'show', 'ag_clinic_sv'], { env });
      expect(show.stdout).toMatch(/voice:\s+sarvam vidya \(bulbul:v2\)/);
      expect(show.stdout).toMatch(/clips ready, \d+ failed \(voice: sarvam refused the API key/);
      expect((await runCli(['agent', 'show', 'ag_clinic_booking'], { env })).stdout).toMatch(/voice:\s+embedded, for the language/);

      await d.stop('SIGTERM');
      const log = d.stdout();
      const warns = (re: RegExp) => log.split('\n').filter((l) => re.test(l));
      expect(warns(/cloud voice failed: elevenlabs has no API key on the daemon/)).toHaveLength(1);
      expect(warns(/cloud voice failed: sarvam refused the API key \(HTTP 403/)).toHaveLength(1);
      expect(warns(/"level":40.*"provider":"sarvam","reason":"http_403"/)).toHaveLength(1);
      expect(log + d.stderr()).not.toContain(svKey);
    } finally {
      await sarvam.close();
    }
  });
});

/**
 * `vagent agent test --voice` (docs/agent-tests.md "Voice"), through the built binary: the
 * caller's lines are said by the embedded voice (or played from a turn's `audio` WAV file) on a
 * simulated carrier call into an ephemeral daemon, heard by the embedded recogniser, and the
 * expectations are checked on what the session recorded. A line the recogniser hears otherwise
 * fails its turn, naming what was heard for what was said.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as wavefileModule from 'wavefile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, requireBuild, ROOT, runCli, tempDir } from '../support/daemon.js';
import { synthesizeLines } from '../support/espeak-worker.js';

type WaveFileClass = typeof wavefileModule.WaveFile;
const loaded = wavefileModule as unknown as { WaveFile?: WaveFileClass; default?: { WaveFile: WaveFileClass } };
const WaveFile: WaveFileClass = loaded.WaveFile ?? loaded.default!.WaveFile;

const SCENARIOS = `agent: clinic.yaml
now: "2026-11-20T10:00:00+05:30"
scenarios:
  - name: the name by voice, the yes from a WAV file
    turns:
      - caller: "My name is Priya Patel"
        expect: { step: name, reply_contains: "Priya Patel", layer: capture }
      - audio: yes.wav
        expect: { step: day, slots: { patient_name: Priya Patel } }
      - caller: "tomorrow"
        expect: { step: day, reply_matches: "twenty-first of November" }
  - name: a name the recogniser does not know
    turns:
      - caller: "My name is John Smith"
        expect: { step: name, reply_contains: "John Smith" }
`;

// An outbound agent: its call is prepared with the file's customer name and context.
const OUTBOUND = `agent: delivery.yaml
now: "2026-11-27T11:00:00+05:30"
customer_name: Asha Rao
context: { seller_name: ShopKart, delivery_date: "tomorrow, the 28th" }
scenarios:
  - name: the identity said on an outbound call
    turns:
      - caller: "yes"
        expect: { step: order_number, layer: capture, slots: { identity_confirmed: true } }
`;

let dir: string;
beforeAll(async () => {
  requireBuild();
  dir = tempDir('vagent-agent-voice-');
  fs.copyFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), path.join(dir, 'clinic.yaml'));
  fs.writeFileSync(path.join(dir, 'clinic.test.yaml'), SCENARIOS);
  fs.copyFileSync(path.join(ROOT, 'config', 'agents', 'ag_delivery_confirmation.yaml'), path.join(dir, 'delivery.yaml'));
  fs.writeFileSync(path.join(dir, 'delivery.test.yaml'), OUTBOUND);
  const [yes] = await synthesizeLines('agent-test-voice', ['yes'], 'en');
  const wav = new WaveFile();
  wav.fromScratch(1, yes!.sampleRate, '16', yes!.samples);
  fs.writeFileSync(path.join(dir, 'yes.wav'), wav.toBuffer());
}, 60_000);
afterAll(cleanupAll);

describe('vagent agent test --voice', { timeout: 200_000 }, () => {
  it('passes scenarios said on the phone (a WAV turn, an outbound call) and fails one whose line is misheard, naming what was heard', async () => {
    const junit = path.join(dir, 'report.xml');
    const files = [path.join(dir, 'clinic.test.yaml'), path.join(dir, 'delivery.test.yaml')];
    const r = await runCli(['agent', 'test', ...files, '--voice', '--junit', junit], { timeoutMs: 170_000 });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('✓ the name by voice, the yes from a WAV file');
    expect(r.stdout).toContain('✗ a name the recogniser does not know');
    expect(r.stdout).toMatch(/turn 1: heard "[^"]*" for "My name is John Smith"/);
    expect(r.stdout).toMatch(/heard: {2}"[^"]+"/);
    expect(r.stdout).toContain('✓ the identity said on an outbound call');
    expect(r.stdout).toContain('3 scenarios in 2 files: 2 passed, 1 failed');
    expect(fs.readFileSync(junit, 'utf8')).toContain('<testcase classname="ag_clinic_booking" name="a name the recogniser does not know"');
    // The temp state dir of the ephemeral daemon is gone.
    expect(fs.readdirSync(path.dirname(junit)).sort()).toEqual([
      'clinic.test.yaml',
      'clinic.yaml',
      'delivery.test.yaml',
      'delivery.yaml',
      'report.xml',
      'yes.wav',
    ]);
  });

  it('refuses a missing or unreadable audio file before anything runs (exit 2), and an audio-only turn without --voice', async () => {
    const file = path.join(dir, 'bad.test.yaml');
    fs.writeFileSync(file, SCENARIOS.replace('audio: yes.wav', 'audio: nowhere.wav'));
    const missing = await runCli(['agent', 'test', file, '--voice'], { timeoutMs: 60_000 });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/bad\.test\.yaml:8:\d+: scenarios\[0\]\.turns\[1\]\.audio: .*nowhere\.wav: cannot read: ENOENT/);
    fs.writeFileSync(path.join(dir, 'noise.wav'), 'not a wav');
    fs.writeFileSync(file, SCENARIOS.replace('audio: yes.wav', 'audio: noise.wav'));
    const notWav = await runCli(['agent', 'test', file, '--voice'], { timeoutMs: 60_000 });
    expect(notWav.code).toBe(2);
    expect(notWav.stderr).toMatch(/noise\.wav: not a WAV file/);
    const text = await runCli(['agent', 'test', path.join(dir, 'clinic.test.yaml')], { timeoutMs: 60_000 });
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/turns\[1\]\.audio: a turn given only as audio cannot run as text: .*--voice/);
  });
});

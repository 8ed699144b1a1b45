/**
 * `vagent call simulate`'s local half: the flags become a plan (lines in the order typed,
 * WAV files decoded to 16 kHz mono), and bad flags are refused before anything is sent.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { WaveFile } from 'wavefile';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeTranscripts, scriptOf, simulationPlan, type CallSimulateFlags } from '../../src/cli/commands/call-simulate-plan.js';
import { CliError, EXIT } from '../../src/cli/errors.js';
import { buildProgram } from '../../src/cli/main.js';
import { callerLineFromWav, CallerWavError } from '../../src/cli/simulator/sim-audio.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-sim-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function wavFile(name: string, channels: number, rate: number, bitDepth: string, samples: number[][] | number[]): string {
  const w = new WaveFile();
  w.fromScratch(channels, rate, bitDepth, samples);
  const file = path.join(dir, name);
  fs.writeFileSync(file, w.toBuffer());
  return file;
}

/** 0.5 s of a 440 Hz tone at `rate`. */
const tone = (rate: number, amp = 8000): number[] =>
  Array.from({ length: rate / 2 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * 440 * i) / rate)));

function simulateOpts(argv: string[]): CallSimulateFlags {
  const call = buildProgram().commands.find((c) => c.name() === 'call')!;
  const sim = call.commands.find((c) => c.name() === 'simulate') as Command;
  sim.parseOptions(argv);
  return sim.opts<CallSimulateFlags>();
}

const codeOf = (fn: () => unknown): { exit: number; message: string; param?: string } => {
  try {
    fn();
  } catch (err) {
    if (err instanceof CliError) return { exit: err.exitCode, message: err.message, ...(err.param ? { param: err.param } : {}) };
    throw err;
  }
  throw new Error('did not throw');
};

describe('vagent call simulate: flags → plan', () => {
  it('keeps --say and --wav lines in the order typed, and sends the --say texts as the fake transcripts', () => {
    const wav = wavFile('line.wav', 1, 16000, '16', tone(16000));
    const flags = simulateOpts([
      '--say',
      'my name is Priya',
      '--wav',
      wav,
      '--dtmf',
      '98#',
      '--say',
      'tomorrow at 5 pm',
      '--transport',
      'exotel',
      '--barge-in',
    ]);
    const plan = simulationPlan('ag_clinic_booking', flags);
    expect(plan.lines.map((l) => l.kind)).toEqual(['say', 'wav', 'dtmf', 'say']);
    expect(plan.lines[2]).toEqual({ kind: 'dtmf', digits: '98#' });
    expect(plan).toMatchObject({
      transport: 'exotel',
      format: { encoding: 'pcm16', sampleRate: 16000 },
      bargeIn: true,
      to: '+919876543210',
      timeoutS: 180,
    });
    expect(JSON.parse(fakeTranscripts(plan))).toEqual(['my name is Priya', '', 'tomorrow at 5 pm']);
  });

  it('streams 16 kHz linear PCM where the carrier offers it (exotel by default), μ-law 8 kHz on twilio', () => {
    const say = [{ kind: 'say' as const, value: 'hi' }];
    expect(simulationPlan('ag_x', { say })).toMatchObject({
      transport: 'exotel',
      format: { encoding: 'pcm16', sampleRate: 16000 },
    });
    expect(simulationPlan('ag_x', { say, transport: 'plivo', sampleRate: '8000' }).format).toEqual({
      encoding: 'pcm16',
      sampleRate: 8000,
    });
    expect(simulationPlan('ag_x', { say, transport: 'twilio' }).format).toEqual({ encoding: 'mulaw', sampleRate: 8000 });
    expect(codeOf(() => simulationPlan('ag_x', { say, transport: 'twilio', sampleRate: '16000' }))).toMatchObject({
      exit: EXIT.error,
      param: 'sample_rate',
    });
    expect(codeOf(() => simulationPlan('ag_x', { say, sampleRate: '44100' }))).toMatchObject({
      exit: EXIT.error,
      param: 'sample_rate',
    });
  });

  it('refuses what cannot be simulated, naming the flag', () => {
    expect(codeOf(() => simulationPlan('ag_x', {}))).toMatchObject({
      exit: EXIT.usage,
      message: expect.stringContaining('--say'),
    });
    expect(codeOf(() => simulationPlan('ag_x', { say: [{ kind: 'say', value: 'hi' }], transport: 'vonage' }))).toMatchObject({
      exit: EXIT.error,
      param: 'transport',
    });
    expect(
      codeOf(() =>
        simulationPlan('ag_x', {
          say: [
            { kind: 'say', value: 'hi' },
            { kind: 'dtmf', value: '12x' },
          ],
        }),
      ),
    ).toMatchObject({ exit: EXIT.error, param: 'dtmf' });
    expect(codeOf(() => simulationPlan('ag_x', { say: [{ kind: 'say', value: 'hi' }], to: '98765' }))).toMatchObject({
      exit: EXIT.error,
      param: 'to',
    });
    expect(codeOf(() => simulationPlan('ag_x', { say: [{ kind: 'say', value: 'hi' }], timeoutS: '2' }))).toMatchObject({
      exit: EXIT.error,
      param: 'timeout_s',
    });
    expect(codeOf(() => simulationPlan('ag_x', { say: [{ kind: 'say', value: '  ' }] }))).toMatchObject({
      exit: EXIT.error,
      param: 'say',
    });
    expect(codeOf(() => simulationPlan('ag_x', { wav: [{ kind: 'wav', value: path.join(dir, 'missing.wav') }] }))).toMatchObject({
      exit: EXIT.usage,
      message: expect.stringContaining('ENOENT'),
    });
    const bad = path.join(dir, 'bad.wav');
    fs.writeFileSync(bad, 'RIFF but not really');
    expect(codeOf(() => simulationPlan('ag_x', { wav: [{ kind: 'wav', value: bad }] }))).toMatchObject({
      exit: EXIT.error,
      param: 'wav',
      message: expect.stringContaining('not a WAV file'),
    });
  });

  it('--hang-up ends the script with a hang-up once the last reply has played; without it the agent ends the call', () => {
    const say = ['--say', 'my name is Priya', '--dtmf', '98#'];
    const hangs = simulationPlan('ag_x', simulateOpts([...say, '--hang-up']));
    expect(hangs.hangUp).toBe(true);
    const steps = scriptOf(hangs, [new Int16Array(160), null]);
    expect(steps.map((s) => s.kind)).toEqual(['say', 'dtmf', 'hangup']);
    expect(steps.at(-1)).toEqual({ kind: 'hangup', afterReply: true });
    const stays = simulationPlan('ag_x', simulateOpts(say));
    expect(stays.hangUp).toBe(false);
    expect(scriptOf(stays, [new Int16Array(160), null]).map((s) => s.kind)).toEqual(['say', 'dtmf']);
  });

  it('DTMF alone is a call too', () => {
    expect(simulationPlan('ag_x', { dtmf: [{ kind: 'dtmf', value: '98#' }] })).toMatchObject({
      lines: [{ kind: 'dtmf', digits: '98#' }],
    });
  });
});

describe('caller lines from WAV files', () => {
  it('16 kHz mono is taken as it is', () => {
    const pcm = callerLineFromWav(fs.readFileSync(wavFile('a.wav', 1, 16000, '16', tone(16000))));
    expect(pcm.length).toBe(8000);
    expect(Math.max(...pcm)).toBeGreaterThan(7000);
  });

  it('stereo 24-bit 44.1 kHz becomes 16 kHz mono of the same length', () => {
    const t = tone(44100, 8000 * 256);
    const pcm = callerLineFromWav(fs.readFileSync(wavFile('b.wav', 2, 44100, '24', [t, t])));
    expect(Math.abs(pcm.length - 8000)).toBeLessThanOrEqual(2);
    expect(Math.max(...pcm)).toBeGreaterThan(6000);
  });

  it('8 kHz μ-law WAV (a phone recording) is decoded and resampled', () => {
    const w = new WaveFile();
    w.fromScratch(1, 8000, '16', tone(8000));
    w.toMuLaw();
    const pcm = callerLineFromWav(w.toBuffer());
    expect(Math.abs(pcm.length - 8000)).toBeLessThanOrEqual(2);
    expect(Math.max(...pcm)).toBeGreaterThan(6000);
  });

  it('refuses a file that is not a WAV, and a WAV without samples', () => {
    expect(() => callerLineFromWav(Buffer.from('hello'))).toThrow(CallerWavError);
    expect(() => callerLineFromWav(fs.readFileSync(wavFile('empty.wav', 1, 16000, '16', [])))).toThrow(/no audio/);
  });
});

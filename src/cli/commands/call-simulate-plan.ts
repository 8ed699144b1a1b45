/**
 * `vagent call simulate`'s plan: the flags checked and turned into what the simulated call does
 * (the stream format, the caller's lines and keys in order, the call to prepare), and the
 * caller's script those lines become (synthesised or read audio, barge-in or after-reply timing).
 * Nothing here talks to the daemon.
 */
import fs from 'node:fs';
import { type PlaceCallBody } from '../../client/index.js';
import { EXAMPLE_DID } from '../../domain/e164.js';
import { toSpokenText } from '../../engine/spoken.js';
import { CARRIER_DIALECTS, type CarrierAudioFormat, type CarrierDialect } from '../../media/carriers/types.js';
import { callerLineFromPcm, callerLineFromWav, CallerWavError } from '../simulator/sim-audio.js';
import { type SimStep } from '../simulator/sim-client.js';
import { CliError, EXIT, InvalidValueError, UsageError } from '../errors.js';
import { requireE164 } from '../e164-arg.js';
import { quoted } from '../output.js';
import { placeBody } from './call-place.js';
import { wholeNumber } from '../number-arg.js';

/** One `--say`, `--wav` or `--dtmf`, in the order given on the command line. */
export interface CallerLineFlag {
  kind: 'say' | 'wav' | 'dtmf';
  value: string;
}

/** Flags of `vagent call simulate` (`say`, `wav` and `dtmf` are one ordered list of caller steps). */
export interface CallSimulateFlags {
  say?: CallerLineFlag[];
  wav?: CallerLineFlag[];
  dtmf?: CallerLineFlag[];
  transport?: string;
  /** `8000` or `16000`, as typed. */
  sampleRate?: string;
  bargeIn?: boolean;
  to?: string;
  from?: string;
  /** Outbound agents: a JSON object or `@file.json` for their templates, as `vagent call place --context`. */
  context?: string;
  /** Outbound agents: the callee's name (`{{customer_name}}`). */
  customerName?: string;
  /** Whole seconds, as typed. */
  timeoutS?: string;
  /** Exit 1 when the recogniser misheard any `--say` line. */
  strict?: boolean;
  /** Hang up once the reply to the last line or keys has played, instead of waiting for the agent to end the call. */
  hangUp?: boolean;
}

/**
 * The carrier spoken when `--transport` is not given: Exotel, whose 16 kHz linear stream the
 * embedded recogniser hears best (Twilio's is 8 kHz μ-law only).
 */
export const DEFAULT_TRANSPORT: CarrierDialect = 'exotel';

/**
 * The stream format of `transport` at `--sample-rate` (default: 16 kHz where the carrier offers
 * it). Twilio streams μ-law 8 kHz only; Exotel and Plivo stream 16-bit linear PCM at 8 or 16 kHz.
 * @throws InvalidValueError for another rate, or 16 kHz on Twilio
 */
export function streamFormat(transport: CarrierDialect, sampleRate: string | undefined): CarrierAudioFormat {
  const rate = sampleRate === undefined ? (transport === 'twilio' ? 8000 : 16000) : Number(sampleRate.trim());
  if (rate !== 8000 && rate !== 16000)
    throw new InvalidValueError(`--sample-rate must be 8000 or 16000, not ${quoted(String(sampleRate))}`, 'sample_rate');
  if (transport === 'twilio') {
    if (rate !== 8000)
      throw new InvalidValueError(
        '--sample-rate 16000 is not possible on twilio: Twilio Media Streams carry μ-law at 8000 Hz only',
        'sample_rate',
      );
    return { encoding: 'mulaw', sampleRate: 8000 };
  }
  return { encoding: 'pcm16', sampleRate: rate };
}

/** How far into a reply a `--barge-in` line starts, ms. */
export const BARGE_IN_AFTER_MS = 600;
/** The pause after a reply has finished before the next line, ms (on top of the 400 ms quiet that ends a reply). */
const AFTER_REPLY_MS = 300;
const DEFAULT_TIMEOUT_S = 180;
const TIMEOUT_RANGE = { min: 5, max: 3600 };
const DTMF = /^[0-9*#A-Da-d]{1,32}$/;

/** What the flags ask for, checked before anything is sent. */
export interface SimulationPlan {
  agentId: string;
  transport: CarrierDialect;
  /** The stream's audio: Twilio μ-law 8 kHz; Exotel and Plivo 16-bit linear PCM at 8 or 16 kHz. */
  format: CarrierAudioFormat;
  /** The caller's steps in order: lines spoken or played, keys pressed. */
  lines: Array<{ kind: 'say'; text: string } | { kind: 'wav'; file: string; pcm: Int16Array } | { kind: 'dtmf'; digits: string }>;
  bargeIn: boolean;
  /** The caller hangs up once the reply to its last step has played (`--hang-up`). */
  hangUp: boolean;
  to: string;
  from?: string;
  timeoutS: number;
  /** The `POST /v1/calls` body for an outbound agent (checked like `vagent call place`'s). */
  placement: PlaceCallBody;
}

/**
 * The plan for the flags, checked locally (WAV files are read and decoded here).
 * @throws UsageError (exit 2) without any line or key, or for an unreadable `--wav` file;
 *   InvalidValueError (exit 1) for an unknown transport, a bad number, digits or timeout, or
 *   a file that is not a usable WAV.
 */
export function simulationPlan(agentId: string, flags: CallSimulateFlags): SimulationPlan {
  const given = flags.say ?? flags.wav ?? flags.dtmf ?? [];
  const transport = (flags.transport ?? DEFAULT_TRANSPORT).toLowerCase();
  if (!(CARRIER_DIALECTS as readonly string[]).includes(transport)) {
    throw new InvalidValueError(`--transport must be ${CARRIER_DIALECTS.join(', ')}; not ${quoted(String(flags.transport))}`, 'transport');
  }
  const format = streamFormat(transport as CarrierDialect, flags.sampleRate);
  for (const [flag, value] of [
    ['--to', flags.to],
    ['--from', flags.from],
  ] as const) {
    if (value !== undefined) requireE164(value, flag, flag.slice(2));
  }
  const timeoutS =
    flags.timeoutS === undefined
      ? DEFAULT_TIMEOUT_S
      : wholeNumber('--timeout-s', 'timeout_s', flags.timeoutS, TIMEOUT_RANGE.min, TIMEOUT_RANGE.max);
  if (given.length === 0) {
    throw new UsageError(
      'say something: give at least one --say "…" or --wav FILE (or --dtmf KEYS)',
      `example: vagent call simulate ${agentId} --say "My name is Priya Sharma" --say "tomorrow at 5 pm"`,
    );
  }
  const lines: SimulationPlan['lines'] = [];
  for (const line of given) {
    if (line.kind === 'dtmf') {
      if (!DTMF.test(line.value))
        throw new InvalidValueError(
          `--dtmf must be 1 to 32 keys of 0-9, *, #, A-D; not ${quoted(line.value)}`,
          'dtmf',
          'example: --dtmf 9876543210#',
        );
      lines.push({ kind: 'dtmf', digits: line.value.toUpperCase() });
      continue;
    }
    if (line.kind === 'say') {
      if (line.value.trim().length === 0) throw new InvalidValueError('--say needs words, not an empty line', 'say');
      lines.push({ kind: 'say', text: line.value.trim() });
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(line.value);
    } catch (err) {
      throw new UsageError(`cannot read --wav file ${line.value}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    try {
      lines.push({ kind: 'wav', file: line.value, pcm: callerLineFromWav(bytes) });
    } catch (err) {
      if (err instanceof CallerWavError || err instanceof RangeError) {
        throw new InvalidValueError(
          `--wav ${line.value}: ${err.message}`,
          'wav',
          'give a PCM WAV file (mono or stereo, any common rate), e.g. one recorded with `arecord -f S16_LE -r 16000 caller.wav`',
        );
      }
      throw err;
    }
  }
  const placement = placeBody({
    agent: agentId,
    to: flags.to ?? EXAMPLE_DID,
    ...(flags.from !== undefined ? { from: flags.from } : {}),
    ...(flags.context !== undefined ? { context: flags.context } : {}),
    ...(flags.customerName !== undefined ? { customerName: flags.customerName } : {}),
  });
  return {
    agentId,
    transport: transport as CarrierDialect,
    format,
    lines,
    bargeIn: flags.bargeIn === true,
    hangUp: flags.hangUp === true,
    placement,
    to: flags.to ?? EXAMPLE_DID,
    ...(flags.from !== undefined ? { from: flags.from } : {}),
    timeoutS,
  };
}

/** The `vagent_fake_transcripts` parameter: one entry per utterance in order, the `--say` text (a WAV line is heard as ""). */
export function fakeTranscripts(plan: SimulationPlan): string {
  return JSON.stringify(plan.lines.filter((l) => l.kind !== 'dtmf').map((l) => (l.kind === 'say' ? l.text : '')));
}

/** The audio of each step: `--say` lines synthesised with the embedded voice for `language` (16 kHz PCM), WAVs as read, null for keys. */
export async function synthesiseLines(plan: SimulationPlan, language: string): Promise<Array<Int16Array | null>> {
  if (!plan.lines.some((l) => l.kind === 'say')) return plan.lines.map((l) => (l.kind === 'wav' ? l.pcm : null));
  const { EspeakSynthesizer } = await import('../../adapters/speech/espeak.js');
  if (!(await EspeakSynthesizer.available())) {
    throw new CliError(
      'the embedded voice (@echogarden/espeak-ng-emscripten) is not installed, so --say lines cannot be spoken',
      EXIT.error,
      'install vagent with its optional dependencies, or record the lines and pass them with --wav FILE',
    );
  }
  const synth = new EspeakSynthesizer();
  try {
    const voice = synth.voiceFor(language);
    const out: Array<Int16Array | null> = [];
    for (const line of plan.lines) {
      if (line.kind !== 'say') {
        out.push(line.kind === 'wav' ? line.pcm : null);
        continue;
      }
      const audio = await synth.synthesize(toSpokenText(line.text, language), voice, { timeoutMs: 15_000 });
      out.push(callerLineFromPcm(audio.samples, audio.sampleRate));
    }
    return out;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(
      `the embedded voice could not speak a --say line: ${(err as Error).message}`,
      EXIT.error,
      'try again, or pass the line as a recording with --wav FILE',
    );
  } finally {
    await synth.close();
  }
}

/** The caller's script, step by step; then the agent ends the call (or the timeout does), or with `--hang-up` the caller does once the last reply has played. */
export function scriptOf(plan: SimulationPlan, pcm: Array<Int16Array | null>): SimStep[] {
  const steps = plan.lines.map((l, i): SimStep =>
    l.kind === 'dtmf'
      ? {
          kind: 'dtmf',
          digits: l.digits,
          gapMs: 250,
          ...(plan.bargeIn ? { bargeInAfterMs: BARGE_IN_AFTER_MS } : { afterReplyMs: AFTER_REPLY_MS }),
        }
      : {
          kind: 'say',
          pcm: pcm[i]!,
          text: l.kind === 'say' ? l.text : l.file,
          ...(plan.bargeIn ? { bargeInAfterMs: BARGE_IN_AFTER_MS } : { afterReplyMs: AFTER_REPLY_MS }),
        },
  );
  // --hang-up: the caller hangs up once the reply to its last step has played (not over it).
  if (plan.hangUp) steps.push({ kind: 'hangup', afterReply: true });
  return steps;
}

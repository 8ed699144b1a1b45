/**
 * `vagent call simulate AGENT_ID --say "…" …`: a phone call without a phone. The CLI plays the
 * carrier (src/media/carriers/sim-client.ts) against the daemon's media endpoint
 * (`GET /v1/media/{twilio,exotel,plivo}`, issue 16): it prepares the call (`POST /v1/calls`
 * without `dial`, outbound agents) or names the agent (`agent_id`, inbound agents), streams the
 * caller's lines — synthesised with the embedded voice in the agent's language, or read from
 * WAV files — at real-time pacing, and prints the call as it happens: what the recogniser
 * heard and the agent's reply (polled from `GET /v1/sessions/{id}`), the latency from the end
 * of each line to the first reply audio, barge-ins, DTMF, the hang-up and the session summary.
 */
import fs from 'node:fs';
import { ApiResponseError, type Agent, type PlaceCallBody, type SessionDetail, type VagentClient } from '../../client/index.js';
import { EXAMPLE_DID } from '../../domain/e164.js';
import { toSpokenText } from '../../engine/spoken.js';
import { CARRIER_DIALECTS, MAX_CUSTOM_PARAMETER_CHARS, type CarrierAudioFormat, type CarrierDialect } from '../../media/carriers/types.js';
import { callerLineFromPcm, callerLineFromWav, CallerWavError } from '../../media/carriers/sim-audio.js';
import { simulateCall, SimConnectError, type SimEvent, type SimStep, type SimTimeline } from '../../media/carriers/sim-client.js';
import { mismatchMessage, SaidTracker, type SaidStep } from './call-simulate-said.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, HintedApiError, InterruptedError, InvalidValueError, UsageError } from '../errors.js';
import { requireE164 } from '../e164-arg.js';
import { explainMissingContext } from '../json-flag.js';
import { placeBody } from './call.js';
import { bold, dim, formatMs, hint, ok, printFields, printJsonLine, rupees, say } from '../output.js';
import { costLine, valueText } from './chat-view.js';

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
    throw new InvalidValueError(`--sample-rate must be 8000 or 16000, not "${sampleRate}"`, 'sample_rate');
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
/** How often the session is polled for new turns, ms. */
const POLL_MS = 500;
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
    throw new InvalidValueError(`--transport must be ${CARRIER_DIALECTS.join(', ')}; not "${flags.transport}"`, 'transport');
  }
  const format = streamFormat(transport as CarrierDialect, flags.sampleRate);
  for (const [flag, value] of [
    ['--to', flags.to],
    ['--from', flags.from],
  ] as const) {
    if (value !== undefined) requireE164(value, flag, flag.slice(2));
  }
  let timeoutS = DEFAULT_TIMEOUT_S;
  if (flags.timeoutS !== undefined) {
    const n = /^\d+$/.test(flags.timeoutS.trim()) ? Number(flags.timeoutS.trim()) : NaN;
    if (!Number.isSafeInteger(n) || n < TIMEOUT_RANGE.min || n > TIMEOUT_RANGE.max) {
      throw new InvalidValueError(
        `--timeout-s must be a whole number from ${TIMEOUT_RANGE.min} to ${TIMEOUT_RANGE.max}, not "${flags.timeoutS}"`,
        'timeout_s',
      );
    }
    timeoutS = n;
  }
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
          `--dtmf must be 1 to 32 keys of 0-9, *, #, A-D; not "${line.value}"`,
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
async function synthesiseLines(plan: SimulationPlan, language: string): Promise<Array<Int16Array | null>> {
  if (!plan.lines.some((l) => l.kind === 'say')) return plan.lines.map((l) => (l.kind === 'wav' ? l.pcm : null));
  const { EspeakSynthesizer } = await import('../../speech/espeak.js');
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

/** The caller's script, step by step; then the agent ends the call (or the timeout does). */
function scriptOf(plan: SimulationPlan, pcm: Array<Int16Array | null>): SimStep[] {
  return plan.lines.map((l, i): SimStep =>
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
}

/**
 * Refuses, before any call is made, to speak lines no recogniser of the daemon would hear: the
 * agent's language has none (`GET /v1/health?language=`), so the call would only re-prompt until
 * its timeout. Keys alone need no recogniser. A daemon that does not answer `for_language`
 * (older, or without call audio) is not asked further.
 * @throws CliError (exit 1, code `recognition_off`) naming why and the settings that would serve the language
 */
async function requireRecognition(client: VagentClient, plan: SimulationPlan, language: string): Promise<void> {
  if (plan.lines.every((l) => l.kind === 'dtmf')) return;
  const heard = (await client.health(language)).recognition?.for_language;
  if (!heard || heard.provider !== null) return;
  throw new CliError(
    `no recogniser hears ${heard.language} (the language of ${plan.agentId}) on this daemon, so the caller's lines would go unheard: ${heard.reason ?? 'speech recognition is off'}`,
    EXIT.error,
    heard.fix,
    'recognition_off',
  );
}

/** Hints for the API errors this command meets, by code. */
const HINTS: Record<string, string> = {
  not_found: 'see `vagent agent list` for agent ids',
  workflow_not_found: 'see `vagent agent list` for agent ids',
  rate_limit_exceeded: "today's budget for this tenant is spent: see `vagent telephony check`",
};

function explain(err: unknown): unknown {
  const missing = explainMissingContext(err);
  if (missing !== err) return missing;
  if (err instanceof ApiResponseError && HINTS[err.code]) return new HintedApiError(err, HINTS[err.code]!);
  return err;
}

/** A SimConnectError as the CLI says it: refused (401/403/404) or unreachable. */
function explainStream(err: unknown, url: string): unknown {
  if (!(err instanceof SimConnectError)) return err;
  if (err.kind === 'refused') {
    const status = err.status ?? 0;
    if (status === 401 || status === 403) {
      return new CliError(
        `the daemon refused the media stream (HTTP ${status}): the API key was not accepted`,
        EXIT.error,
        'log in again with `vagent login --url URL`, or set VAGENT_API_KEY',
        'unauthorized',
      );
    }
    if (status === 404) {
      return new CliError(
        `the daemon has no media endpoint at ${url} (HTTP 404)`,
        EXIT.error,
        "carrier media streams need a vagent daemon with issue 16's media endpoints: upgrade it",
      );
    }
    return new CliError(`the daemon refused the media stream (HTTP ${status})`, EXIT.error);
  }
  return new CliError(`${err.message}; is \`vagent serve\` running there?`, EXIT.unreachable, undefined, 'daemon_unreachable');
}

/** One entry of Session detail's raw turn list, as far as this command reads it. */
interface TurnRow {
  index?: number;
  user_text?: string;
  reply_text?: string;
  /** A phone-line event turn's kind (`silence`, `not_heard`, …); absent on a caller's utterance. */
  event?: string;
  stt_provider?: string;
  stt_ms?: number;
  stt_confidence?: number;
}

/** camelCase → snake_case keys, for the JSON lines. */
function snake(e: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}

const seconds = (ms: number): string => dim(`[${(ms / 1000).toFixed(1).padStart(5)} s]`);

/**
 * `vagent call simulate AGENT_ID --say "…" [--wav FILE]… [--transport T] [--barge-in]
 * [--dtmf KEYS] [--to E164] [--from E164] [--timeout-s N]`.
 * @throws UsageError / InvalidValueError for bad flags (nothing is sent); HintedApiError for
 *   an unknown agent; CliError for a refused or unreachable stream (exit 3 unreachable).
 */
export async function simulate(ctx: CommandContext, agentId: string, flags: CallSimulateFlags): Promise<void> {
  const plan = simulationPlan(agentId, flags);
  const transcripts = fakeTranscripts(plan);
  if (transcripts.length > MAX_CUSTOM_PARAMETER_CHARS) {
    throw new UsageError(
      `the --say lines are too long together (${transcripts.length} characters as JSON; at most ${MAX_CUSTOM_PARAMETER_CHARS})`,
      'say less, or over several calls',
    );
  }
  const client = await ctx.client();
  let agent: Agent;
  try {
    agent = await client.getAgent(plan.agentId);
  } catch (err) {
    throw explain(err);
  }
  await requireRecognition(client, plan, agent.language);
  const pcm = await synthesiseLines(plan, agent.language);

  // vagent_source: the daemon labels the call `simulator` (GET /v1/calls `source`); it honours
  // the label only on a stream authenticated with an API key, as this one is.
  const params: Record<string, string> = { vagent_fake_transcripts: transcripts, vagent_source: 'simulator', to: plan.to };
  if (plan.from) params.from = plan.from;
  let sessionId: string | undefined;
  let callId: string | undefined;
  if (agent.direction === 'outbound') {
    try {
      const placed = await client.placeCall(plan.placement);
      sessionId = placed.session_id;
      callId = placed.call_id;
    } catch (err) {
      throw explain(err);
    }
    params.call_id = callId;
  } else {
    params.agent_id = plan.agentId;
  }
  const url = client.mediaStreamUrl(plan.transport);
  const startedAt = Math.floor(Date.now() / 1000);
  const emit = ctx.json ? (value: Record<string, unknown>) => printJsonLine(value) : undefined;
  const announce = (): void => {
    if (emit) {
      emit({
        event: 'call',
        call_id: callId ?? null,
        session_id: sessionId ?? null,
        agent_id: plan.agentId,
        transport: plan.transport,
        to: plan.to,
        from: plan.from ?? null,
      });
      return;
    }
    ok(
      callId
        ? `call ${callId} (session ${sessionId}) is on the line as ${plan.transport}`
        : `an inbound call to ${plan.agentId} is on the line as ${plan.transport}`,
    );
    const spoken = plan.lines.filter((l) => l.kind !== 'dtmf').length;
    hint(
      `the caller has ${spoken} line${spoken === 1 ? '' : 's'} to say${plan.bargeIn ? `, each ${BARGE_IN_AFTER_MS} ms into the agent's reply` : ", each after the agent's reply"}`,
    );
  };

  const call = simulateCall({
    url,
    dialect: plan.transport,
    format: plan.format,
    headers: client.upgradeHeaders(),
    customParameters: params,
    to: plan.to,
    ...(plan.from ? { from: plan.from } : {}),
    steps: scriptOf(plan, pcm),
    timeoutMs: plan.timeoutS * 1000,
  });
  const said = new SaidTracker(plan.lines.map((l): SaidStep => (l.kind === 'wav' ? { kind: 'wav', file: l.file } : l)));
  const follower = new TurnFollower(client, plan.agentId, sessionId, startedAt, said, emit);
  call.on('event', (e) => {
    if (e.type === 'open') announce();
    printEvent(e, emit);
  });
  const poll = setInterval(() => void follower.poll(), POLL_MS);
  // Ctrl-C is the caller hanging up: `stop`, then the summary as usual, then exit 130.
  let interrupted = false;
  const onInterrupt = (): void => {
    interrupted = true;
    call.hangup(true);
  };
  process.once('SIGINT', onInterrupt);
  let timeline: SimTimeline;
  try {
    timeline = await call.done;
  } catch (err) {
    // The prepared call never got a stream: end it rather than leave its session open.
    if (callId) await client.hangUpCall(callId).catch(() => undefined);
    throw explainStream(err, url);
  } finally {
    clearInterval(poll);
    process.removeListener('SIGINT', onInterrupt);
  }
  const detail = await follower.settle();
  printEnd(timeline, detail, follower.sessionId, said, emit);
  if (interrupted) throw new InterruptedError('the caller hung up');
  const { code, reason, by } = timeline.close;
  if (by === 'bot' && code !== 1000 && code !== 1001) {
    throw new CliError(
      `the daemon ended the stream with close code ${code}${reason ? ` (${reason})` : ''}`,
      EXIT.error,
      code === 1008 ? "a policy close: the stream was refused or broke the carrier protocol; see the daemon's log" : undefined,
      'stream_closed',
    );
  }
  if (flags.strict && said.mismatches.length > 0) {
    throw new CliError(
      mismatchMessage(said.mismatches),
      EXIT.error,
      'the recogniser did not hear these lines as said (docs/media.md: what the embedded recogniser mishears)',
      'misheard',
    );
  }
}

/** Prints one timeline event (human lines, or one JSON line). */
function printEvent(e: SimEvent, emit?: (v: Record<string, unknown>) => void): void {
  if (emit) {
    const { type, atMs, ...rest } = e;
    emit({ event: type, at_ms: atMs, ...snake(rest) });
    return;
  }
  const at = seconds(e.atMs);
  switch (e.type) {
    case 'line_start':
      say(`${at} ${bold('caller')}  ${e.text ?? ''}${e.overReply ? dim(' (over the agent)') : ''}`);
      break;
    case 'reply_start':
      if (e.turn >= 0) say(`${at} ${dim(`first reply audio ${formatMs(e.latencyMs)} after the caller stopped`)}`);
      else say(`${at} ${dim(`opening audio ${formatMs(e.latencyMs)} after the stream started`)}`);
      break;
    case 'clear':
      if (e.bargeInMs !== undefined)
        say(
          `${at} ${bold('barge-in')}  the agent stopped ${formatMs(e.bargeInMs)} after the caller began (${formatMs(e.droppedMs)} of reply dropped)`,
        );
      else say(`${at} ${dim(`the agent cleared ${formatMs(e.droppedMs)} of queued audio`)}`);
      break;
    case 'dtmf':
      say(`${at} ${bold('caller')}  presses ${e.digit}`);
      break;
    case 'no_reply':
      say(`${at} ${dim(`no reply after ${formatMs(e.waitedMs)}: the caller goes on`)}`);
      break;
    case 'protocol_error':
      say(`${at} ${dim(`carrier protocol error (${e.code}): ${e.message}`)}`);
      break;
    case 'timeout':
      say(`${at} ${dim('time is up: the caller hangs up')}`);
      break;
    case 'closed':
      say(
        `${at} ${bold(e.by === 'bot' ? 'the agent hung up' : 'the caller hung up')} ${dim(`(close ${e.code}${e.reason ? ` ${e.reason}` : ''})`)}`,
      );
      break;
    default:
      break;
  }
}

/** Follows the session's turns: prints each new one (what was heard, what the agent said). */
class TurnFollower {
  private printed = 0;
  private busy = false;
  private last: SessionDetail | undefined;

  constructor(
    private readonly client: VagentClient,
    private readonly agentId: string,
    public sessionId: string | undefined,
    private readonly startedAt: number,
    private readonly said: SaidTracker,
    private readonly emit?: (v: Record<string, unknown>) => void,
  ) {}

  /** Finds an inbound call's session: the newest of this agent opened since the call began. */
  private async find(): Promise<void> {
    const page = await this.client.listSessions({ limit: 10 });
    const s = page.data.find((x) => x.agent_id === this.agentId && x.created_at >= this.startedAt - 1);
    if (s) this.sessionId = s.session_id;
  }

  async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      if (!this.sessionId) await this.find();
      if (!this.sessionId) return;
      const d = await this.client.getSession(this.sessionId);
      this.last = d;
      const turns = (Array.isArray(d.turns) ? d.turns : []) as TurnRow[];
      for (; this.printed < turns.length; this.printed++) this.print(turns[this.printed]!);
    } catch {
      // Following the turns is best effort (it runs on a timer): the next poll tries again.
    } finally {
      this.busy = false;
    }
  }

  private print(t: TurnRow): void {
    const { said, match } = this.said.next(t);
    if (this.emit) {
      this.emit({
        event: 'turn',
        index: t.index ?? this.printed,
        user_text: t.user_text ?? null,
        reply_text: t.reply_text ?? null,
        stt_provider: t.stt_provider ?? null,
        stt_ms: t.stt_ms ?? null,
        stt_confidence: t.stt_confidence ?? null,
        said,
        match,
      });
      return;
    }
    const confidence = typeof t.stt_confidence === 'number' ? dim(` (confidence ${t.stt_confidence.toFixed(2)})`) : '';
    if (match === false) {
      const heard = t.user_text ? `"${t.user_text}"` : 'nothing';
      say(`          ${bold('heard')}   ${heard} ≠ said "${said}"${confidence} ${bold(`← misheard (turn ${t.index ?? this.printed})`)}`);
    } else if (t.user_text) say(`          ${dim('heard')}   ${t.user_text}${confidence}`);
    if (t.reply_text) say(`          ${bold('agent')}   ${t.reply_text}`);
  }

  /** After the call: polls until the session has ended (at most 5 s) and returns its detail. */
  async settle(): Promise<SessionDetail | undefined> {
    for (let i = 0; i < 10; i++) {
      while (this.busy) await new Promise((r) => setTimeout(r, 50));
      await this.poll();
      if (this.last?.session?.status === 'ended') break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return this.last;
  }
}

/** The end of the call: per-turn latencies, barge-ins, the session summary and costs. */
function printEnd(
  t: SimTimeline,
  d: SessionDetail | undefined,
  sessionId: string | undefined,
  said: SaidTracker,
  emit?: (v: Record<string, unknown>) => void,
): void {
  const steps = d?.session?.steps ?? [];
  const extracted = Object.fromEntries(steps.filter((s) => s.slot && s.value !== null).map((s) => [s.slot!, s.value]));
  if (emit) {
    emit({
      event: 'summary',
      session_id: sessionId ?? null,
      status: d?.session?.status ?? null,
      outcome: d?.session?.outcome ?? null,
      extracted,
      cost: d ? { total_inr: d.total_cost_inr, llm_inr: d.llm_cost_inr, tts_inr: d.tts_cost_inr, stt_inr: d.stt_cost_inr } : null,
      stt_seconds: d?.stt_seconds ?? null,
      mismatches: said.mismatches.length,
      misheard: said.mismatches,
      turns: t.turns.map((x) => snake({ ...x })),
      opening_ms: t.openingMs ?? null,
      frames: {
        sent: t.sent.frames,
        received: t.received.frames,
        lateness_p99_ms: t.received.lateness.p99,
        marks: t.received.marks,
        marks_played: t.received.marksPlayed,
        clears: t.received.clears,
      },
      close: t.close,
    });
    return;
  }
  say();
  const latencies = t.turns.filter((x) => x.latencyMs !== undefined).map((x) => `${x.turn + 1}: ${formatMs(x.latencyMs!)}`);
  const fields: Array<[string, string]> = [['session', sessionId ?? dim('-')]];
  if (d?.session) fields.push(['status', d.session.outcome ? `${d.session.status} (${d.session.outcome})` : d.session.status]);
  fields.push(['reply latency', latencies.length ? latencies.join(dim(' · ')) : dim('-')]);
  fields.push([
    'mismatches',
    said.mismatches.length === 0
      ? dim('none: every --say line was heard as said')
      : `${said.mismatches.length} (turn ${said.mismatches.map((m) => m.turn ?? '?').join(', ')})`,
  ]);
  const barges = t.turns.filter((x) => x.bargeInMs !== undefined);
  if (barges.length) fields.push(['barge-ins', barges.map((x) => `${x.turn + 1}: ${formatMs(x.bargeInMs!)}`).join(dim(' · '))]);
  fields.push([
    'audio',
    `${t.received.frames} frames received, ${t.received.marksPlayed}/${t.received.marks} marks played, lateness p99 ${formatMs(t.received.lateness.p99)}`,
  ]);
  if (d) {
    fields.push([
      'cost',
      costLine({ total_inr: d.total_cost_inr, llm_inr: d.llm_cost_inr, tts_inr: d.tts_cost_inr, stt_inr: d.stt_cost_inr }),
    ]);
    fields.push(['stt', `${(d.stt_seconds ?? 0).toFixed(1)} s ${dim(`(${rupees(d.stt_cost_inr)})`)}`]);
  }
  printFields(fields);
  say(dim('extracted:'));
  const entries = Object.entries(extracted);
  if (entries.length === 0) say(dim('  nothing captured'));
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  for (const [slot, value] of entries) say(`  ${slot.padEnd(width)}  ${valueText(value)}`);
  if (sessionId) hint(`the whole session: vagent session show ${sessionId}`);
}

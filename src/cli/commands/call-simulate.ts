/**
 * `vagent call simulate AGENT_ID --say "…" …`: a phone call without a phone. The CLI plays the
 * carrier (src/cli/simulator/sim-client.ts) against the daemon's media endpoint
 * (`GET /v1/media/{twilio,exotel,plivo}`, docs/media.md): it prepares the call (`POST /v1/calls`
 * without `dial`, outbound agents) or names the agent (`agent_id`, inbound agents), streams the
 * caller's lines — synthesised with the embedded voice in the agent's language, or read from
 * WAV files — at real-time pacing, and prints the call as it happens: what the recogniser
 * heard and the agent's reply (polled from `GET /v1/sessions/{id}`), the latency from the end
 * of each line to the first reply audio, barge-ins, DTMF, the hang-up and the session summary.
 *
 * The flags become a plan in call-simulate-plan.ts; what is printed is in call-simulate-print.ts.
 */
import { ApiResponseError, type Agent, type VagentClient } from '../../client/index.js';
import { MAX_CUSTOM_PARAMETER_CHARS } from '../../media/carriers/types.js';
import { simulateCall, SimConnectError, type SimEvent, type SimTimeline } from '../simulator/sim-client.js';
import {
  BARGE_IN_AFTER_MS,
  fakeTranscripts,
  scriptOf,
  simulationPlan,
  synthesiseLines,
  type CallSimulateFlags,
  type SimulationPlan,
} from './call-simulate-plan.js';
import { closedLine, endReasonOf, POLL_MS, printEnd, printEvent, TurnFollower } from './call-simulate-print.js';
import { mismatchMessage, SaidTracker, type SaidStep } from './call-simulate-said.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, HintedApiError, InterruptedError, UsageError } from '../errors.js';
import { explainMissingContext } from '../json-flag.js';
import { hint, ok, plural, printJsonLine, say } from '../output.js';
import { checkId } from './ids.js';

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
        'carrier media streams need a vagent daemon that serves /v1/media/* carrier streams: upgrade it',
      );
    }
    return new CliError(`the daemon refused the media stream (HTTP ${status})`, EXIT.error);
  }
  return new CliError(`${err.message}; is \`vagent serve\` running there?`, EXIT.unreachable, undefined, 'daemon_unreachable');
}

/**
 * `vagent call simulate AGENT_ID --say "…" [--wav FILE]… [--transport T] [--barge-in]
 * [--dtmf KEYS] [--to E164] [--from E164] [--timeout-s N]`.
 * @throws UsageError / InvalidValueError for bad flags (nothing is sent); HintedApiError for
 *   an unknown agent; CliError for a refused or unreachable stream (exit 3 unreachable).
 */
export async function simulate(ctx: CommandContext, agentId: string, flags: CallSimulateFlags): Promise<void> {
  const plan = simulationPlan(checkId('agent', agentId), flags);
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
      `the caller has ${plural(spoken, 'line')} to say${plan.bargeIn ? `, each ${BARGE_IN_AFTER_MS} ms into the agent's reply` : ", each after the agent's reply"}${plan.hangUp ? ', then hangs up once the last reply has played' : ''}`,
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
  // The daemon's end of the call is told after it, once its end reason is known (closedLine).
  let closedByDaemon: Extract<SimEvent, { type: 'closed' }> | undefined;
  call.on('event', (e) => {
    if (e.type === 'open') announce();
    if (e.type === 'closed' && e.by === 'bot' && !emit) closedByDaemon = e;
    else printEvent(e, emit);
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
  const endCallId = callId ?? follower.sessionId?.replace(/^se_/, 'cl_');
  const endReason = timeline.close.by === 'bot' ? await endReasonOf(client, endCallId) : null;
  if (closedByDaemon) say(closedLine(closedByDaemon, endReason));
  printEnd(timeline, detail, follower.sessionId, said, emit, interrupted, endReason);
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

/**
 * A scenario said on the phone (`vagent agent test --voice`, docs/agent-tests.md "Voice"): each
 * caller line is synthesised with the embedded voice (or a turn's `audio` WAV file is played)
 * and streamed by the carrier simulator (../simulator/sim-client.ts, Exotel's dialect at 16 kHz,
 * as `vagent call simulate` does) into an ephemeral daemon's media endpoint, where the embedded
 * recogniser hears it. The expectations are then checked on what the session recorded: each
 * turn the recogniser heard, in order, against the scenario's turn of the same number — the
 * heard text, the reply, step, layer, slots (read when that reply began), cost — and the outcome.
 *
 * A line misheard is the failure it is: the turn's reply is what the agent said to what it
 * heard, and a line not heard at all leaves its turn with nothing to check.
 */
import fs from 'node:fs';
import type { Scenario } from '../../domain/agent-scenario.js';
import { EXAMPLE_DID } from '../../domain/e164.js';
import { CURSOR_CLOSING } from '../../engine/state.js';
import { toSpokenText } from '../../engine/spoken.js';
import type { VoiceHost } from '../../daemon/voice-host.js';
import { callerLineFromPcm, callerLineFromWav } from '../simulator/sim-audio.js';
import { simulateCall, type SimStep } from '../simulator/sim-client.js';
import { checkSession, checkTurn, type SlotValue, type TurnObservation } from './expect.js';
import type { ScenarioRun } from './run.js';
import { sessionInput } from './run.js';
import type { LoadedScenarioFile } from './scenario-file.js';

/** The pause after a reply has finished before the next line, ms (as `vagent call simulate`). */
const AFTER_REPLY_MS = 300;
/** Longest wait for the reply to the last line before the caller hangs up, ms. */
const LAST_REPLY_WAIT_MS = 15_000;

/** Speaks caller lines with the embedded voice: 16 kHz PCM. */
export interface CallerVoice {
  say(text: string, language: string): Promise<Int16Array>;
  close(): Promise<void>;
}

/**
 * The embedded voice (eSpeak NG), as `vagent call simulate` speaks `--say` lines.
 * @throws Error when it is not installed
 */
export async function openCallerVoice(): Promise<CallerVoice> {
  const { EspeakSynthesizer } = await import('../../adapters/speech/espeak.js');
  if (!(await EspeakSynthesizer.available())) throw new Error('the embedded voice (@echogarden/espeak-ng-emscripten) is not installed');
  const synth = new EspeakSynthesizer();
  return {
    async say(text, language) {
      const audio = await synth.synthesize(toSpokenText(text, language), synth.voiceFor(language), { timeoutMs: 15_000 });
      return callerLineFromPcm(audio.samples, audio.sampleRate);
    },
    close: () => synth.close(),
  };
}

interface StoredTurnView {
  user_text: string;
  reply_text: string;
  layer: string;
  cursor: string;
  ended: boolean;
  cost: { total_inr: number };
  llm?: unknown;
  event?: string;
}

interface DetailView {
  total_cost_inr: number;
  turns: StoredTurnView[];
  session: { status: string; outcome: string | null; steps: Array<{ slot: string | null; value: SlotValue | null }> };
}

/** `/v1` on the host, with its key. @throws Error naming the status and the error's message */
async function api<T>(host: VoiceHost, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${host.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${host.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  if (!res.ok) throw new Error(`${json.error?.code ?? res.status}: ${json.error?.message ?? res.statusText}`);
  return json as T;
}

function slotsOf(detail: DetailView): Record<string, SlotValue> {
  const out: Record<string, SlotValue> = {};
  for (const s of detail.session.steps) if (s.slot !== null && s.value !== null) out[s.slot] = s.value;
  return out;
}

/** Words as compared: lower case, letters and digits only. */
const words = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/**
 * Says one scenario on the phone to agent `agentId` (of `direction`, speaking `language`) on `host`.
 * Outbound agents get a prepared call (`POST /v1/calls` with the scenario's customer name and
 * context); inbound ones a call naming the agent, which carries neither (as a real call): the
 * daemon's clock is set to the scenario's `now` for them.
 */
export async function runVoiceScenario(
  host: VoiceHost,
  voice: CallerVoice,
  loaded: LoadedScenarioFile,
  scenario: Scenario,
  agent: { direction: string; language: string },
): Promise<ScenarioRun> {
  const started = performance.now();
  const run: ScenarioRun = { name: scenario.name, passed: false, failures: [], error: null, turns: [], session: null, duration_ms: 0 };
  const finish = (): ScenarioRun => {
    run.passed = run.error === null && run.failures.length === 0;
    run.duration_ms = Math.round(performance.now() - started);
    return run;
  };
  const steps: SimStep[] = [];
  try {
    for (const turn of scenario.turns) {
      const pcm = turn.audio
        ? callerLineFromWav(fs.readFileSync(loaded.resolve(turn.audio)))
        : await voice.say(turn.caller ?? '', agent.language);
      steps.push({ kind: 'say', pcm, text: turn.caller ?? turn.audio ?? '', afterReplyMs: AFTER_REPLY_MS });
    }
  } catch (err) {
    run.error = `the caller's lines could not be made: ${(err as Error).message}`;
    return finish();
  }
  const params: Record<string, string> = { vagent_source: 'simulator' };
  let sessionId: string | null = null;
  try {
    if (agent.direction === 'outbound') {
      host.setNow(undefined);
      const input = sessionInput(loaded.agent.id, loaded.scenarios, scenario);
      const placed = await api<{ call_id: string; session_id: string }>(host, 'POST', '/v1/calls', { ...input, to: EXAMPLE_DID });
      params.call_id = placed.call_id;
      sessionId = placed.session_id;
    } else {
      // A phone call carries no context: the scenario's `now` is the daemon's clock instead.
      host.setNow(scenario.now ?? loaded.scenarios.now);
      params.agent_id = loaded.agent.id;
    }
  } catch (err) {
    run.error = `the call could not be prepared: ${(err as Error).message}`;
    return finish();
  }
  // An inbound call's session is found by the carrier call id the simulator sent.
  let carrierCallId = '';
  const findSession = async (): Promise<string | null> => {
    if (sessionId !== null) return sessionId;
    const list = await api<{ data: Array<{ session_id: string; provider_call_id: string | null }> }>(host, 'GET', '/v1/calls?limit=100');
    sessionId = list.data.find((c) => c.provider_call_id === carrierCallId)?.session_id ?? null;
    return sessionId;
  };
  const detailOf = async (): Promise<DetailView | null> => {
    const id = await findSession();
    return id === null ? null : api<DetailView>(host, 'GET', `/v1/sessions/${id}`);
  };

  const call = simulateCall({
    url: `${host.url.replace(/^http/, 'ws')}/v1/media/exotel`,
    dialect: 'exotel',
    format: { encoding: 'pcm16', sampleRate: 16000 },
    headers: { authorization: `Bearer ${host.key}` },
    customParameters: params,
    steps,
    timeoutMs: 60_000 + scenario.turns.length * 30_000,
  });
  carrierCallId = call.ids.callId;
  // Slots as each reply began (its turn was written before its audio), by the caller's turn.
  const snapshots = new Map<number, Promise<Record<string, SlotValue> | null>>();
  const last = steps.length - 1;
  let lastWait: NodeJS.Timeout | undefined;
  call.on('event', (e) => {
    if (e.type === 'reply_start' && e.turn >= 0)
      snapshots.set(
        e.turn,
        detailOf()
          .then((d) => (d ? slotsOf(d) : null))
          .catch(() => null),
      );
    if (e.type === 'reply_end' && e.turn === last) call.hangup(true);
    if (e.type === 'line_end' && e.turn === last) lastWait = setTimeout(() => call.hangup(true), LAST_REPLY_WAIT_MS);
  });
  try {
    await call.done;
  } catch (err) {
    run.error = `the call did not connect: ${(err as Error).message}`;
    return finish();
  } finally {
    clearTimeout(lastWait);
  }
  let detail: DetailView | null = null;
  // The stream's end ends the session: wait for it to be recorded.
  for (let i = 0; i < 50; i++) {
    detail = await detailOf().catch(() => null);
    if (detail?.session.status === 'ended') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!detail) {
    run.error = 'the call opened no session';
    return finish();
  }
  const heard = detail.turns.filter((t) => t.event === undefined);
  let ended = false;
  for (const [i, turn] of scenario.turns.entries()) {
    const n = i + 1;
    const said = turn.caller ?? `(audio: ${turn.audio ?? ''})`;
    const t = heard[i];
    if (!t) {
      run.failures.push({ turn: n, expectation: 'heard', expected: said, got: null });
      continue;
    }
    const got: TurnObservation = {
      reply: t.reply_text,
      step: t.cursor,
      layer: t.layer,
      llm_used: t.llm !== undefined,
      slots: (await snapshots.get(i)) ?? slotsOf(detail),
      ended: t.ended || t.cursor === CURSOR_CLOSING,
      cost_inr: t.cost.total_inr,
    };
    ended = got.ended;
    const failures = checkTurn(n, turn.expect, got);
    // A line heard otherwise is named first: it is why the turn went as it did.
    if (failures.length > 0 && turn.caller !== undefined && words(turn.caller) !== words(t.user_text))
      failures.unshift({ turn: n, expectation: 'heard', expected: turn.caller, got: t.user_text });
    run.turns.push({ n, caller: said, heard: t.user_text, ...got, failures });
    run.failures.push(...failures);
  }
  if (heard.length > scenario.turns.length)
    run.failures.push({
      turn: null,
      expectation: 'turns',
      expected: scenario.turns.length,
      got: `${heard.length} heard: ${heard.map((h) => JSON.stringify(h.user_text)).join(', ')}`,
    });
  run.session = { outcome: detail.session.outcome, slots: slotsOf(detail), ended, cost_inr: detail.total_cost_inr };
  run.failures.push(...checkSession(scenario.expect, run.session));
  return finish();
}

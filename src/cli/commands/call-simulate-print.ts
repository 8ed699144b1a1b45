/**
 * What `vagent call simulate` prints as the call goes: each timeline event, the session's turns
 * as the daemon records them (what the recogniser heard, the agent's reply), and the end of the
 * call (latencies, barge-ins, the summary and costs), as human lines or JSON lines.
 */
import { type SessionDetail, type VagentClient } from '../../client/index.js';
import { type SimEvent, type SimTimeline } from '../simulator/sim-client.js';
import type { SaidTracker } from './call-simulate-said.js';
import { bold, dim, formatMs, hint, plural, printable, printFields, rupees, say } from '../output.js';
import { costLine, valueText } from './chat-view.js';

/** How often the session is polled for new turns, ms. */
export const POLL_MS = 500;

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

/** Prints one timeline event (human lines, or one JSON line). */
export function printEvent(e: SimEvent, emit?: (v: Record<string, unknown>) => void): void {
  if (emit) {
    const { type, atMs, ...rest } = e;
    emit({ event: type, at_ms: atMs, ...snake(rest) });
    return;
  }
  const at = seconds(e.atMs);
  switch (e.type) {
    case 'line_start':
      say(`${at} ${bold('caller')}  ${printable(e.text ?? '')}${e.overReply ? dim(' (over the agent)') : ''}`);
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
      say(`${at} ${bold('caller')}  presses ${printable(e.digit)}`);
      break;
    case 'no_reply':
      say(`${at} ${dim(`no reply after ${formatMs(e.waitedMs)}: the caller goes on`)}`);
      break;
    case 'protocol_error':
      say(`${at} ${dim(printable(`carrier protocol error (${e.code}): ${e.message}`))}`);
      break;
    case 'timeout':
      say(`${at} ${dim('time is up: the caller hangs up')}`);
      break;
    case 'closed':
      say(closedLine(e, null));
      break;
    default:
      break;
  }
}

/**
 * Who ended the call, in words: from the stream's close and, when the daemon recorded it, the
 * call's `end_reason` (docs/events.md). A daemon that stops closes the stream without a normal
 * close (1005, 1006, 1001 …), and an `api_hangup` is a hang-up through the API (`vagent call
 * hangup`, the dashboard): neither is the agent hanging up.
 */
export function closedText(close: { code: number; by: 'bot' | 'caller' }, endReason: string | null): string {
  if (close.by === 'caller') return 'the caller hung up';
  switch (endReason) {
    case 'api_hangup':
      return 'hung up by the API/operator (vagent call hangup, the dashboard)';
    case 'daemon_restart':
      return 'the daemon closed the stream (it stopped)';
    case 'media_failed':
      return "the daemon closed the stream: the call's media failed";
    case 'max_duration':
      return 'the agent hung up: the call reached its time limit';
    case 'completed_by_agent':
      return 'the agent hung up';
    default:
      return close.code === 1000 ? 'the agent hung up' : 'the daemon closed the stream';
  }
}

/** The line of a `closed` event: its time, {@link closedText} and the close code. */
export function closedLine(e: Extract<SimEvent, { type: 'closed' }>, endReason: string | null): string {
  return `${seconds(e.atMs)} ${bold(closedText(e, endReason))} ${dim(printable(`(close ${e.code}${e.reason ? ` ${e.reason}` : ''})`))}`;
}

/**
 * The `end_reason` of call `callId`'s `call.ended` event, waiting up to `waitMs` for the daemon to
 * record it; null when there is none (yet), or the daemon cannot be asked (it stopped).
 */
export async function endReasonOf(client: VagentClient, callId: string | undefined, waitMs = 1500): Promise<string | null> {
  if (callId === undefined) return null;
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      const page = await client.listEvents({ types: ['call.ended'], call_id: callId, limit: 1 });
      const reason = page.data[0]?.data.end_reason;
      if (typeof reason === 'string') return reason;
    } catch {
      return null;
    }
    if (Date.now() >= until) return null;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Follows the session's turns: prints each new one (what was heard, what the agent said). */
export class TurnFollower {
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
      const heard = t.user_text ? `"${printable(t.user_text)}"` : 'nothing';
      say(
        `          ${bold('heard')}   ${heard} ≠ said "${printable(String(said))}"${confidence} ${bold(`← misheard (turn ${t.index ?? this.printed})`)}`,
      );
    } else if (t.user_text) say(`          ${dim('heard')}   ${printable(t.user_text)}${confidence}`);
    if (t.reply_text) say(`          ${bold('agent')}   ${printable(t.reply_text)}`);
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

/** The spoken lines of the script the caller never got to play (the call ended first). */
function linesNotPlayed(said: SaidTracker, t: Pick<SimTimeline, 'turns'>): number {
  return Math.max(0, said.lines - t.turns.filter((x) => x.kind === 'say').length);
}

/**
 * The `mismatches` row: the misheard lines, lines played that no turn answered, and the `--say`
 * lines never played when the call ended first (interrupted with Ctrl-C, or hung up) — never
 * "every line was heard as said" then.
 */
export function mismatchText(said: SaidTracker, t: Pick<SimTimeline, 'turns'>, interrupted: boolean): string {
  const lines = (n: number): string => plural(n, '--say line');
  const played = t.turns.filter((x) => x.kind === 'say').length;
  const notPlayed = linesNotPlayed(said, t);
  const unheard = Math.max(0, played - said.heardLines);
  const parts: string[] = [];
  if (said.mismatches.length > 0) parts.push(`${said.mismatches.length} (turn ${said.mismatches.map((m) => m.turn ?? '?').join(', ')})`);
  if (unheard > 0) parts.push(`${lines(unheard)} played but not answered`);
  if (notPlayed > 0) {
    const replied = t.turns.some((x) => x.latencyMs !== undefined);
    parts.push(
      `${interrupted ? `interrupted before ${replied ? 'the end' : 'any reply'}` : 'the call ended first'}: ${lines(notPlayed)} not played`,
    );
  }
  return parts.length === 0 ? dim('none: every --say line was heard as said') : parts.join('; ');
}

/**
 * The end of the call: how it ended, per-turn latencies, barge-ins, the session summary and costs.
 * @param interrupted the operator pressed Ctrl-C
 * @param endReason the call's `end_reason`, when the daemon recorded one ({@link endReasonOf})
 */
export function printEnd(
  t: SimTimeline,
  d: SessionDetail | undefined,
  sessionId: string | undefined,
  said: SaidTracker,
  emit?: (v: Record<string, unknown>) => void,
  interrupted = false,
  endReason: string | null = null,
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
      not_played: linesNotPlayed(said, t),
      ended_by: closedText(t.close, endReason),
      end_reason: endReason,
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
  const fields: Array<[string, string]> = [['session', sessionId ? printable(sessionId) : dim('-')]];
  if (d?.session) fields.push(['status', printable(d.session.outcome ? `${d.session.status} (${d.session.outcome})` : d.session.status)]);
  fields.push(['reply latency', latencies.length ? latencies.join(dim(' · ')) : dim('-')]);
  fields.push(['mismatches', mismatchText(said, t, interrupted)]);
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
  for (const [slot, value] of entries) say(`  ${printable(slot).padEnd(width)}  ${valueText(value)}`);
  if (sessionId) hint(`the whole session: vagent session show ${sessionId}`);
}

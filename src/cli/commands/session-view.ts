/**
 * How `vagent session show|list` shows sessions to people (`SessionDetailSchema` in src/contract/sessions.ts, with
 * vagent's extension fields; `GET /v1/sessions`). Every line is written through src/cli/output.ts,
 * every text from a caller, an agent or the daemon through its `printable`.
 */
import type { SessionDetail, SessionListItem } from '../../client/index.js';
import { bold, dim, formatMs, formatTime, orDash, plural, printable, printFields, printTable, rupees, say } from '../output.js';
import { costLine, STATUS_MARK, valueText } from './chat-view.js';

/** Longest caller or agent text in the turn list before it is cut with `…`. */
const TEXT_WIDTH = 48;

const cut = (text: string): string => printable(text.length > TEXT_WIDTH ? `${text.slice(0, TEXT_WIDTH - 1)}…` : text);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** `ended (completed)`, `open`. */
const statusLine = (status: string, outcome: string | null): string => printable(outcome ? `${status} (${outcome})` : status);

/** One entry of Session detail's raw turn list, as far as the CLI reads it. */
interface TurnRow {
  index?: number;
  user_text?: string;
  reply_text?: string;
  layer?: string;
  cost?: { total_inr?: number };
}

/**
 * `vagent session show`: the session's agent, status and outcome, its metrics and costs,
 * each step with its captured value, and the turn list.
 */
export async function printSessionDetail(d: SessionDetail): Promise<void> {
  const id = typeof d.session_id === 'number' ? `se_${d.session_id}` : String(d.session_id);
  const turns = (Array.isArray(d.turns) ? d.turns : []) as TurnRow[];
  // A daemon older than the `session` extension leaves it out.
  const rec: Partial<SessionDetail['session']> = d.session ?? {};
  const fields: Array<[string, string]> = [
    ['session', printable(id)],
    ['agent', orDash(rec.agent_id)],
    ['status', rec.status ? statusLine(rec.status, rec.outcome ?? null) : dim('-')],
  ];
  if (rec.title) fields.push(['title', printable(rec.title)]);
  if (rec.customer_name) fields.push(['customer', printable(rec.customer_name)]);
  if (typeof rec.created_at === 'number') fields.push(['started', formatTime(rec.created_at)]);
  if (typeof rec.ended_at === 'number') fields.push(['ended', formatTime(rec.ended_at)]);
  fields.push(
    ['turns', String(turns.length)],
    ['cost', costLine({ total_inr: d.total_cost_inr, llm_inr: d.llm_cost_inr, tts_inr: d.tts_cost_inr, stt_inr: d.stt_cost_inr })],
    ['cache hits', `${d.cache_hits} (${(d.cache_hit_percent ?? 0).toFixed(1)}%)`],
    ['live tts', `${plural(d.live_tts_calls, 'call')} (${(d.live_tts_percent ?? 0).toFixed(1)}%), ${plural(d.tts_chars, 'char')}`],
    ['llm', `${plural(d.llm_calls, 'call')}, ${d.llm_input_tokens} in / ${d.llm_output_tokens} out / ${d.llm_cached_tokens} cached tokens`],
    ['stt', `${(d.stt_seconds ?? 0).toFixed(1)} s`],
    ['latency', `avg ${formatMs(d.avg_latency_ms)}, total ${formatMs(d.total_latency_ms)}`],
    ['silence', formatMs(d.total_silence_ms)],
  );
  printFields(fields);
  if (Array.isArray(rec.steps) && rec.steps.length > 0) {
    say();
    say(bold('Steps'));
    await printStepsTable(rec.steps);
  }
  say();
  say(bold('Turns'));
  await printTurnsTable(turns);
}

async function printStepsTable(steps: SessionDetail['session']['steps']): Promise<void> {
  await printTable(
    steps,
    [
      { header: 'STEP', cell: (s) => printable(s.id) },
      { header: 'STATUS', cell: (s) => (STATUS_MARK[s.status] ?? String)(printable(s.status)) },
      { header: 'ATTEMPTS', cell: (s) => String(s.attempts) },
      { header: 'SLOT', cell: (s) => orDash(s.slot) },
      { header: 'CAPTURED', cell: (s) => (s.value === null ? dim('-') : valueText(s.value)) },
    ],
    'No steps.',
  );
}

async function printTurnsTable(turns: TurnRow[]): Promise<void> {
  await printTable(
    turns,
    [
      { header: '#', cell: (t) => String(t.index ?? '') },
      { header: 'CALLER', cell: (t) => cut(str(t.user_text)) },
      { header: 'AGENT', cell: (t) => cut(str(t.reply_text)) },
      { header: 'LAYER', cell: (t) => orDash(t.layer) },
      { header: 'COST', cell: (t) => rupees(t.cost?.total_inr) },
    ],
    'No turns yet.',
  );
}

/** `vagent session list`: one row per session, newest first. */
export async function printSessionList(rows: SessionListItem[]): Promise<void> {
  await printTable(
    rows,
    [
      { header: 'SESSION', cell: (s) => printable(s.session_id) },
      { header: 'AGENT', cell: (s) => printable(s.agent_id) },
      { header: 'STATUS', cell: (s) => statusLine(s.status, s.outcome) },
      { header: 'TURNS', cell: (s) => String(s.turns) },
      { header: 'CUSTOMER', cell: (s) => orDash(s.customer_name) },
      { header: 'STARTED', cell: (s) => formatTime(s.created_at) },
      { header: 'COST', cell: (s) => rupees(s.cost.total_inr) },
    ],
    'No sessions yet. Open one: vagent chat ag_clinic_booking',
  );
}

/**
 * How `vagent chat` and `vagent session` show a conversation to people: agent lines with
 * subtle marks for fillers, readbacks and FAQ answers, a dim cost footer per turn, step
 * progress and the end-of-session summary. Every line is written through src/cli/output.ts, and
 * every text from a caller, an agent file or the daemon through its `printable`.
 */
import type { Clip, CostInr, SessionEndResult, SessionOpened, StepProgress, TurnResult } from '../../client/index.js';
import { accent, bad, bold, dim, formatMs, good, mark, ok, plural, printable, printFields, rupees, say } from '../output.js';

/** The dim tag after a clip's text, or '' for a plain clip. */
function tagOf(clip: Clip): string {
  if (clip.is_filler) return 'filler';
  if (clip.is_readback || clip.is_digit) return 'readback';
  if (clip.is_confirm_prompt) return 'confirm';
  if (clip.source === 'faq') return clip.intent_key ? `faq:${clip.intent_key}` : 'faq';
  return '';
}

/**
 * Clips as display lines: runs of digit clips (a digit-by-digit readback) are joined into one
 * line (`9 8 7 6 5 4 3 2 1 0`).
 */
export function clipLines(clips: Clip[]): Array<{ text: string; tag: string }> {
  const lines: Array<{ text: string; tag: string }> = [];
  for (const clip of clips) {
    const prev = lines[lines.length - 1];
    if (clip.is_digit && prev?.tag === 'readback' && /^[0-9 ]+$/.test(prev.text)) prev.text += ` ${clip.text}`;
    else lines.push({ text: clip.text, tag: tagOf(clip) });
  }
  return lines;
}

/** Prints the agent's clips, one line each: `agent › text  · readback`. */
export function printAgentClips(clips: Clip[]): void {
  for (const { text: raw, tag } of clipLines(clips)) {
    const text = printable(raw);
    const body = tag === 'filler' ? dim(text) : tag.startsWith('faq') || tag === 'readback' ? mark(text) : text;
    say(`${accent('agent ›')} ${body}${tag ? dim(`  · ${printable(tag)}`) : ''}`);
  }
}

/** Prints what the caller said (non-interactive mode, where the terminal did not echo it). */
export function printCallerLine(text: string): void {
  say(`${dim('you   ›')} ${printable(text)}`);
}

/** The session header and the opening clips, in `display_order`. */
export function printOpening(opened: SessionOpened, interactive: boolean): void {
  const a = opened.agent;
  say(
    dim(
      printable(`session ${opened.session_id} · ${a?.name ?? opened.agent_id} (${opened.agent_id}, ${a?.language ?? '?'})`) +
        (interactive ? ' · /help for commands, Ctrl-D to end' : ''),
    ),
  );
  // `display_order` is one of the engine's open-ended clip flags (an opening clip's place).
  const order = (c: Clip) => (typeof c.display_order === 'number' ? c.display_order : 0);
  const clips = [...(opened.opening?.clips ?? [])].sort((x, y) => order(x) - order(y));
  printAgentClips(clips);
}

/**
 * The model's part of a turn's footer (docs/llm.md "Where the model acts"): its tokens (cached
 * apart) and its share of the cost, to the micro-rupee as the API gives it (one request costs a
 * fraction of a paisa); for a request that failed, why (`llm refused (401) 1.2 s`); for an answer
 * not used or a request not sent, the reason from the trace.
 */
export function llmPart(turn: TurnResult): string {
  const u = turn.trace?.usage;
  const miss = (turn.trace?.steps ?? []).find((st) => st.layer === 'llm' && st.result === 'miss');
  const reason =
    miss && typeof miss.detail === 'string'
      ? `${printable(miss.detail)}${typeof miss.status === 'number' ? ` (${miss.status})` : ''}`
      : null;
  const ms = formatMs(turn.trace?.latency_ms?.llm);
  if (u && reason !== null && u.input_tokens === 0 && u.output_tokens === 0) return ` · llm ${reason} ${ms}`;
  if (u) {
    const tokens = `${u.input_tokens} in (${u.cached_tokens} cached) / ${u.output_tokens} out tokens`;
    return ` · llm ${tokens} ₹${(turn.cost?.llm_inr ?? 0).toFixed(6)} ${ms}${reason !== null ? ` (not used: ${reason})` : ''}`;
  }
  return reason !== null ? ` · llm not called (${reason})` : '';
}

/**
 * A turn's footer: `layer=capture · ₹0.00 · 12 ms (session ₹…)`, with the model's part
 * ({@link llmPart}) and the cost of live speech synthesis when not zero (`· tts ₹0.24`).
 */
export function turnFooter(turn: TurnResult): string {
  const ttsInr = turn.cost?.tts_inr ?? 0;
  const tts = ttsInr > 0 ? ` · tts ${rupees(ttsInr)}` : '';
  return (
    `layer=${printable(turn.trace?.layer ?? '?')} · ${rupees(turn.cost?.total_inr)} · ${formatMs(turn.trace?.latency_ms?.total)}${llmPart(turn)}${tts}` +
    ` (session ${rupees(turn.session_totals?.total_inr)})`
  );
}

/** One turn: the agent's lines and a dim footer ({@link turnFooter}). */
export function printTurn(turn: TurnResult): void {
  printAgentClips(turn.clips?.length ? turn.clips : [{ text: turn.text, audio_url: turn.audio_url, livekit_wav_url: null }]);
  say(dim(turnFooter(turn)));
}

/** Step statuses coloured: done green, failed red, skipped dim. */
export const STATUS_MARK: Record<string, (s: string) => string> = {
  done: good,
  failed: bad,
  skipped: (s) => dim(s),
  pending: (s) => s,
};

/**
 * `/state`: `3/5 steps (60%)` and each step's status; the current step marked `›`, and when it
 * awaits the caller's yes to a value read back, `awaiting confirmation: X` instead of `pending`.
 */
export function printStepProgress(progress: StepProgress | undefined, cursor?: string, awaiting?: string): void {
  if (!progress) {
    say(dim('no step progress for this session'));
    return;
  }
  say(`${bold('steps')} ${progress.done}/${progress.total} (${progress.pct}%)`);
  for (const [id, status] of Object.entries(progress.steps ?? {})) {
    const colour = STATUS_MARK[status] ?? ((s: string) => s);
    const shown =
      id === cursor && awaiting !== undefined && status === 'pending'
        ? mark(`awaiting confirmation: ${printable(awaiting)}`)
        : colour(printable(status));
    say(`${id === cursor ? accent('›') : ' '} ${printable(id).padEnd(16)} ${shown}`);
  }
}

/**
 * The value a readback line reads back: `text` matched against the `{{value}}` templates it may
 * have been said from (the agent's `readback` and `heard_readback` lines, docs/agents.md
 * "Messages"); the whole line when none fits.
 */
export function valueOfReadback(text: string, templates: readonly string[]): string {
  for (const t of templates) {
    const at = t.indexOf('{{value}}');
    if (at < 0) continue;
    const before = t.slice(0, at);
    const after = t.slice(at + '{{value}}'.length);
    if (text.length > before.length + after.length && text.startsWith(before) && text.endsWith(after))
      return text.slice(before.length, text.length - after.length);
  }
  return text;
}

/** `/help` in a chat. */
export function printChatHelp(): void {
  say(dim('/end    end the session and show the summary (also Ctrl-D)'));
  say(dim('/state  step progress'));
  say(dim("/play   play the last reply's audio"));
  say(dim('/help   this list'));
}

/** `₹total (llm ₹…, tts ₹…, stt ₹…)`. */
export function costLine(cost: CostInr | undefined): string {
  if (!cost) return dim('-');
  return `${rupees(cost.total_inr)} ${dim(`(llm ${rupees(cost.llm_inr)}, tts ${rupees(cost.tts_inr)}, stt ${rupees(cost.stt_inr)})`)}`;
}

/** A captured value for people: strings as they are ({@link printable}), booleans as yes/no, the rest as JSON. */
export function valueText(v: unknown): string {
  if (typeof v === 'string') return printable(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return JSON.stringify(v);
}

/** The end-of-session result: outcome, steps, cost and the extracted values. */
export function printSummary(end: SessionEndResult): void {
  ok(`session ${end.session_id} ended`);
  // The summary is open-ended (an object, `{}` when building it failed): read its usual members
  // (docs/api-decisions.md "Sessions") only when they have their usual types.
  const s = end.summary ?? {};
  if (typeof s.outcome !== 'string') {
    say(dim('no summary for this session'));
    printFields([['cost', costLine(end.cost)]]);
    return;
  }
  const turns = typeof s.turns === 'number' ? s.turns : undefined;
  const steps = Array.isArray(s.steps) ? (s.steps as Array<{ id: string; status: string }>) : [];
  const fields: Array<[string, string]> = [
    ['outcome', `${printable(s.outcome)}${turns === undefined ? '' : dim(` (${plural(turns, 'turn')})`)}`],
  ];
  if (steps.length)
    fields.push([
      'steps',
      steps.map((st) => `${printable(String(st.id))} ${(STATUS_MARK[st.status] ?? String)(printable(String(st.status)))}`).join(dim(' · ')),
    ]);
  fields.push(['cost', costLine(end.cost)]);
  printFields(fields);
  const extracted = typeof s.extracted === 'object' && s.extracted !== null ? Object.entries(s.extracted) : [];
  say(dim('extracted:'));
  if (extracted.length === 0) say(dim('  nothing captured'));
  const width = Math.max(0, ...extracted.map(([k]) => k.length));
  for (const [slot, value] of extracted) say(`  ${printable(slot).padEnd(width)}  ${valueText(value)}`);
}

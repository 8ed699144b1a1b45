/**
 * The screens of `vagent dashboard`, as pure Ink components of the model (./model.ts), the UI
 * state (./keys.ts) and the terminal's size: the calls list and the call view, each with the
 * header and a footer line. The whole frame is at most `height - 1` lines, so that Ink never
 * scrolls the terminal (a frame as tall as the terminal makes it clear the screen on each
 * render). With `color` off (NO_COLOR, https://no-color.org) no colour is used; the cursor
 * row is marked with `›` as well as shown inverse.
 */
import { Box, Text } from 'ink';
import type { EventView } from '../../client/index.js';
import { KEY_HELP, type UiState } from './keys.js';
import { printable } from './printable.js';
import {
  activeCount,
  cacheHitPercent,
  clock,
  elapsedS,
  isEnded,
  maskNumber,
  type CallRow,
  type DashboardModel,
  type TurnRow,
} from './model.js';

/** The stream's state, as the header says it. */
export type ConnState =
  | { state: 'connecting' }
  | { state: 'live' }
  | { state: 'reconnecting'; attempt: number; reason: string }
  | { state: 'failed'; reason: string };

/**
 * The daemon's status line of the header, each part null while unknown: `telephony` from
 * `GET /v1/telephony/check` (`ok` or its problem), `recognizer` from `GET /v1/health`
 * `recognition` and the cloud recognisers' checks (`fake`, `deepgram ok`, `off`).
 */
export interface DaemonStatus {
  telephony: string | null;
  recognizer: string | null;
}

/** Props of {@link DashboardView}. */
export interface ViewProps {
  model: DashboardModel;
  ui: UiState;
  /** The rows of the list as shown (visibleRows of the model). */
  rows: readonly CallRow[];
  nowS: number;
  width: number;
  height: number;
  color: boolean;
  conn: ConnState;
  url: string;
  status: DaemonStatus | null;
}

/** A turn over 1 s is shown red. */
const SLOW_MS = 1000;

const rupees = (v: number | null): string => (v === null ? '-' : `₹${v.toFixed(2)}`);
const ms = (v: number | null): string => (v === null ? '-' : v >= 1000 ? `${(v / 1000).toFixed(1)}s` : `${Math.round(v)}ms`);

/**
 * `text` cut to `width` characters with `…`: most of the cutting done before Ink measures the
 * text, which is most of a frame's CPU (Ink still cuts what is wider on the screen, e.g. CJK).
 */
export function fit(text: string, width: number): string {
  if (text.length <= width) return text;
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** A cell of `width` columns, its text cut to fit. */
function Cell(props: { width: number; children: string; color?: string | undefined; dim?: boolean; bold?: boolean }) {
  return (
    <Box width={props.width} flexShrink={0} marginRight={1}>
      <Text wrap="truncate-end" color={props.color} dimColor={props.dim} bold={props.bold}>
        {fit(props.children, props.width)}
      </Text>
    </Box>
  );
}

function Header({ model, nowS: _now, width, color, conn, url, status }: ViewProps) {
  const c = (name: string) => (color ? name : undefined);
  const live =
    conn.state === 'live' ? (
      <Text color={c('green')}>● live</Text>
    ) : conn.state === 'reconnecting' ? (
      <Text color={c('yellow')}>
        ○ reconnecting (try {conn.attempt}: {printable(conn.reason)})
      </Text>
    ) : conn.state === 'failed' ? (
      <Text color={c('red')}>✕ {printable(conn.reason)}</Text>
    ) : (
      <Text dimColor>○ connecting</Text>
    );
  const budget = model.budgetInr === null ? '' : ` / ${rupees(model.budgetInr)}`;
  const over = model.budgetInr !== null && model.spentInr !== null && model.spentInr >= model.budgetInr;
  const hit = cacheHitPercent(model);
  return (
    <Box flexDirection="column" width={width}>
      <Box>
        <Text wrap="truncate-end">
          <Text bold>vagent</Text> {live} {printable(url)} <Text dimColor>tenant</Text> {printable(model.tenant ?? '-')}
        </Text>
      </Box>
      <Box>
        <Text wrap="truncate-end">
          <Text dimColor>calls</Text> {activeCount(model)} active · {model.callsToday} today <Text dimColor>spend today</Text>{' '}
          <Text color={over ? c('red') : undefined}>
            {model.spentInr === null ? '-' : rupees(model.spentInr)}
            {budget}
          </Text>{' '}
          <Text dimColor>cache hit</Text> {hit === null ? '- (no turns yet)' : `${hit}%`}
        </Text>
      </Box>
      <Box>
        <Text wrap="truncate-end">
          <Text dimColor>telephony</Text> {printable(status?.telephony ?? '-')} <Text dimColor>stt</Text>{' '}
          {printable(status?.recognizer ?? '-')}
        </Text>
      </Box>
    </Box>
  );
}

/** Column widths of the list for a terminal `width` wide (80 and up): what is left goes to the agent (up to 20) and the last turn. */
function columns(width: number) {
  const fixed = { dir: 3, number: 13, step: 4, dur: 6, layer: 7, lat: 5, cost: 6 };
  const used = 2 + Object.values(fixed).reduce((a, b) => a + b, 0) + 9; // the cursor mark, the cells, a space after each
  const rest = Math.max(24, width - used);
  const agent = Math.min(20, Math.max(10, Math.floor(rest * 0.25)));
  return { ...fixed, agent, last: rest - agent };
}

/** An agent id without its `ag_` prefix (the list is narrow; the call view shows it whole). */
const agentName = (id: string | null): string => (id === null ? '-' : id.replace(/^ag_/, ''));

function lastLine(r: CallRow): string {
  if (isEnded(r)) return `ended: ${r.endReason ?? 'unknown'}`;
  const t = r.turns.at(-1);
  if (!t) return r.phase === 'created' ? 'waiting' : r.phase;
  return `"${t.heard ?? ''}" → ${t.reply ?? ''}`;
}

function CallLine({
  r,
  selected,
  w,
  nowS,
  color,
}: {
  r: CallRow;
  selected: boolean;
  w: ReturnType<typeof columns>;
  nowS: number;
  color: boolean;
}) {
  const dim = isEnded(r);
  const t = r.turns.at(-1);
  const slow = t?.latencyMs != null && t.latencyMs > SLOW_MS;
  return (
    <Box>
      <Text inverse={selected}>{selected ? '›' : ' '}</Text>
      <Text> </Text>
      <Cell width={w.dir} dim={dim}>
        {r.direction === 'inbound' ? 'in' : r.direction === 'outbound' ? 'out' : '-'}
      </Cell>
      <Cell width={w.number} dim={dim} bold={selected}>
        {maskNumber(r.number)}
      </Cell>
      <Cell width={w.agent} dim={dim}>
        {agentName(r.agentId)}
      </Cell>
      <Cell width={w.step} dim={dim}>
        {r.steps ? `${r.steps.done}/${r.steps.total}` : '-'}
      </Cell>
      <Cell width={w.dur} dim={dim}>
        {clock(elapsedS(r, nowS))}
      </Cell>
      {dim ? (
        // An ended call's reason takes the turn's columns too: `ended: completed_by_agent` fits at 80 columns.
        <Cell width={w.last + 1 + w.layer + 1 + w.lat} dim>
          {lastLine(r)}
        </Cell>
      ) : (
        <>
          <Cell width={w.last}>{lastLine(r)}</Cell>
          <Cell width={w.layer}>{t?.layer ?? '-'}</Cell>
          <Cell width={w.lat} color={slow && color ? 'red' : undefined} bold={slow && !color}>
            {ms(t?.latencyMs ?? null)}
          </Cell>
        </>
      )}
      <Cell width={w.cost} dim={dim}>
        {rupees(r.costInr)}
      </Cell>
    </Box>
  );
}

function CallList(props: ViewProps & { lines: number }) {
  const { rows, ui, width, nowS, color, lines } = props;
  const w = columns(width);
  if (rows.length === 0)
    return (
      <Box height={lines + 1}>
        <Text dimColor wrap="truncate-end">
          {ui.filter
            ? `No calls match "${ui.filter}".`
            : 'No calls in progress. They appear here as they start (vagent call simulate, vagent call place --dial).'}
        </Text>
      </Box>
    );
  const at = Math.max(
    0,
    rows.findIndex((r) => r.callId === ui.selectedId),
  );
  const top = Math.min(Math.max(0, at - lines + 1), Math.max(0, rows.length - lines));
  const shown = rows.slice(top, top + lines);
  return (
    <Box flexDirection="column" height={lines + 1}>
      <Box>
        <Text>{'  '}</Text>
        {(['DIR', 'NUMBER', 'AGENT', 'STEP', 'TIME', 'HEARD → REPLY', 'LAYER', 'TURN', 'COST'] as const).map((h, i) => (
          <Cell key={h} width={[w.dir, w.number, w.agent, w.step, w.dur, w.last, w.layer, w.lat, w.cost][i]!} bold>
            {h}
          </Cell>
        ))}
      </Box>
      {shown.map((r) => (
        <CallLine key={r.callId} r={r} selected={r.callId === (ui.selectedId ?? rows[0]?.callId)} w={w} nowS={nowS} color={color} />
      ))}
    </Box>
  );
}

const hhmmss = (s: number) => new Date(s * 1000).toTimeString().slice(0, 8);

/** The lines of a turn: the caller's words, and the reply with its layer, latency and cost. */
function turnLines(t: TurnRow): Array<{ key: string; who: string; text: string; meta: string | null; slow: boolean }> {
  const meta = `[${t.layer ?? '-'} ${ms(t.latencyMs)} ${rupees(t.costInr)}]`;
  return [
    { key: 'c', who: `${hhmmss(t.at)} caller`, text: t.heard ?? '…', meta: null, slow: false },
    { key: 'a', who: '         agent', text: t.reply ?? '…', meta, slow: t.latencyMs !== null && t.latencyMs > SLOW_MS },
  ];
}

function eventText(e: EventView): string {
  const d = e.data;
  const extra = typeof d.end_reason === 'string' ? ` ${d.end_reason}` : typeof d.layer === 'string' ? ` ${d.layer}` : '';
  return printable(`${hhmmss(e.created_at)} ${e.type} ${e.id}${extra}`);
}

function CallView(props: ViewProps & { lines: number }) {
  const { model, ui, nowS, width, color, lines } = props;
  const r = ui.selectedId === null ? undefined : model.calls[ui.selectedId];
  if (!r)
    return (
      <Box height={lines + 1}>
        <Text dimColor>This call is no longer shown (Esc: back to the list).</Text>
      </Box>
    );
  const c = (name: string) => (color ? name : undefined);
  const evLines = Math.max(1, Math.min(r.events.length, Math.floor((lines - 2) / 3)));
  const trLines = Math.max(1, lines - 2 - evLines);
  const notice =
    r.history !== 'done'
      ? 'Loading the earlier turns and events of the call…'
      : !r.historyComplete
        ? 'Not all of the earlier events of the call could be loaded.'
        : r.turns.length === 0
          ? 'No turns yet.'
          : null;
  const transcript = r.turns
    .flatMap((t, i) => turnLines(t).map((l) => ({ ...l, key: `${i}${l.key}` })))
    .slice(-Math.max(1, trLines - (notice === null ? 0 : 1)));
  return (
    <Box flexDirection="column" height={lines + 1} width={width}>
      <Text wrap="truncate-end" bold>
        {r.callId} {r.direction ?? '-'} {maskNumber(r.number)} {r.agentId ?? '-'} <Text dimColor>steps</Text>{' '}
        {r.steps ? `${r.steps.done}/${r.steps.total}` : '-'} {clock(elapsedS(r, nowS))} {rupees(r.costInr)}{' '}
        {isEnded(r) ? <Text color={c('yellow')}>ended: {r.endReason ?? 'unknown'}</Text> : <Text color={c('green')}>{r.phase}</Text>}
      </Text>
      <Box flexDirection="column" height={trLines}>
        {notice === null ? null : (
          <Text dimColor wrap="truncate-end">
            {notice}
          </Text>
        )}
        {transcript.map((l) => (
          <Text key={l.key} wrap="truncate-end">
            <Text dimColor>{l.who}: </Text>
            <Text color={l.meta ? c('cyan') : undefined}>{l.text}</Text>
            {l.meta ? (
              <Text color={l.slow ? c('red') : undefined} dimColor={!l.slow}>
                {' '}
                {l.meta}
              </Text>
            ) : null}
          </Text>
        ))}
      </Box>
      <Text bold>Events</Text>
      {r.events.slice(-evLines).map((e) => (
        <Text key={e.id} dimColor wrap="truncate-end">
          {eventText(e)}
        </Text>
      ))}
    </Box>
  );
}

/** What the header shows, under the keys on the `?` screen. */
const HEADER_HELP = [
  'The header: the daemon, its stream (live or reconnecting) and the tenant;',
  'calls active and today, spend today against the budget, replies from the cache;',
  'the telephony check, and the speech recogniser (stt) as GET /v1/health says.',
];

function Help({ lines }: { lines: number }) {
  return (
    <Box flexDirection="column" height={lines + 1}>
      <Text bold>Keys</Text>
      {KEY_HELP.slice(0, Math.max(0, lines)).map(([k, what]) => (
        <Text key={k} wrap="truncate-end">
          {k.padEnd(12)} {what}
        </Text>
      ))}
      <Text> </Text>
      {HEADER_HELP.map((l) => (
        <Text key={l} dimColor wrap="truncate-end">
          {l}
        </Text>
      ))}
    </Box>
  );
}

function Footer({ ui, model, color }: ViewProps) {
  const c = (name: string) => (color ? name : undefined);
  if (ui.draft !== null) return <Text wrap="truncate-end">filter: {ui.draft}▏ (Enter applies, Esc cancels)</Text>;
  if (ui.confirmHangup !== null) {
    const r = model.calls[ui.confirmHangup];
    return (
      <Text color={c('yellow')} wrap="truncate-end">
        Hang up {ui.confirmHangup} ({maskNumber(r?.number ?? null)})? y/N
      </Text>
    );
  }
  if (ui.message !== null) return <Text wrap="truncate-end">{printable(ui.message)}</Text>;
  const filter = ui.filter ? `filter "${ui.filter}" (Esc clears) · ` : '';
  const keys =
    ui.screen === 'call' ? 'Esc back · h hang up · ? keys · q quit' : '↑↓/jk move · Enter open · h hang up · / filter · ? keys · q quit';
  return (
    <Text dimColor wrap="truncate-end">
      {filter}
      {keys}
    </Text>
  );
}

/** The whole frame: header (3 lines), the list, call view or keys, and the footer; `height - 1` lines at most. */
export function DashboardView(props: ViewProps) {
  const height = Math.max(8, props.height);
  // header 3 + body (title/table header 1 + lines) + footer 1 = height - 1
  const lines = height - 6;
  return (
    <Box flexDirection="column" width={props.width} height={height - 1} overflow="hidden">
      <Header {...props} />
      {props.ui.help ? (
        <Help lines={lines} />
      ) : props.ui.screen === 'call' ? (
        <CallView {...props} lines={lines} />
      ) : (
        <CallList {...props} lines={lines} />
      )}
      <Footer {...props} />
    </Box>
  );
}

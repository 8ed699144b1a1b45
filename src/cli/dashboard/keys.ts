/**
 * The keys of `vagent dashboard` as a pure function: the screen's UI state and a key in, the
 * new state and what to do out (quit, hang up a call). Arrows and j/k move, Enter opens a
 * call, Esc goes back, `h` hangs up after a `y`, `/` filters, `?` shows the keys, `q` quits.
 */
import type { CallRow } from './model.js';
import { printable } from './printable.js';

/** What the screen shows besides the model. */
export interface UiState {
  screen: 'list' | 'call';
  /** The call the cursor is on (list), or the call open (call view). */
  selectedId: string | null;
  /** The filter applied to the list. */
  filter: string;
  /** While `/` is being typed: the filter as typed so far. */
  draft: string | null;
  /** The call a hang-up awaits a `y` for. */
  confirmHangup: string | null;
  help: boolean;
  /** A line for the footer (a hang-up's outcome), until the next key or a few seconds (the app clears it). */
  message: string | null;
}

/** Characters of a filter, at most: more typed or pasted are left out. */
export const MAX_FILTER = 60;

/** The state the dashboard starts in. */
export const initialUi: UiState = {
  screen: 'list',
  selectedId: null,
  filter: '',
  draft: null,
  confirmHangup: null,
  help: false,
  message: null,
};

/** The keys Ink reports beside the typed text (a subset of its `Key`). */
export interface KeyInfo {
  upArrow?: boolean;
  downArrow?: boolean;
  return?: boolean;
  escape?: boolean;
  backspace?: boolean;
  delete?: boolean;
  ctrl?: boolean;
  meta?: boolean;
}

/** What a key asks the dashboard to do. */
export type KeyEffect = { type: 'quit' } | { type: 'hangup'; callId: string } | null;

/** The keys, as the `?` screen lists them. */
export const KEY_HELP: ReadonlyArray<[string, string]> = [
  ['↑ ↓  j k', 'move between calls'],
  ['Enter', 'open the call: its transcript and events'],
  ['Esc', 'back to the list (or clear the filter)'],
  ['h', 'hang up the call (asks y/N first)'],
  ['/', 'filter by number, agent, call id or end reason; Enter applies'],
  ['?', 'show or hide these keys'],
  ['q  Ctrl-C', 'quit'],
];

/** The id of the row `delta` rows from the selected one (clamped), or null when there is none. */
function move(rows: readonly CallRow[], selectedId: string | null, delta: number): string | null {
  if (rows.length === 0) return null;
  // No selection (or a call no longer shown): the cursor is on the first row.
  const at = Math.max(
    0,
    rows.findIndex((r) => r.callId === selectedId),
  );
  const next = Math.min(rows.length - 1, Math.max(0, at + delta));
  return rows[next]!.callId;
}

/**
 * The UI state after key `input`/`key`, with `rows` the list as shown, and the effect asked for.
 * `ended` says whether a call has ended (by default: as its row in `rows` says); `h` on an
 * ended call says so rather than ask.
 */
export function onKey(
  ui: UiState,
  input: string,
  key: KeyInfo,
  rows: readonly CallRow[],
  ended: (callId: string) => boolean = (id) => rows.some((r) => r.callId === id && r.phase === 'ended'),
): { ui: UiState; effect: KeyEffect } {
  const s: UiState = { ...ui, message: null };
  if (ui.draft !== null) {
    if (key.return) return { ui: { ...s, filter: ui.draft, draft: null }, effect: null };
    if (key.escape) return { ui: { ...s, draft: null }, effect: null };
    if (key.backspace || key.delete) return { ui: { ...s, draft: ui.draft.slice(0, -1) }, effect: null };
    if (input && !key.ctrl && !key.meta) {
      // Typed or pasted: its printable characters, the filter kept to MAX_FILTER of them.
      const typed = [...input.slice(0, 2 * MAX_FILTER)].filter((ch) => printable(ch) === ch);
      return { ui: { ...s, draft: [...ui.draft, ...typed].slice(0, MAX_FILTER).join('') }, effect: null };
    }
    return { ui: s, effect: null };
  }
  if (ui.confirmHangup !== null) {
    if (input === 'y' || input === 'Y') return { ui: { ...s, confirmHangup: null }, effect: { type: 'hangup', callId: ui.confirmHangup } };
    return { ui: { ...s, confirmHangup: null, message: 'not hung up' }, effect: null };
  }
  if (input === 'q') return { ui: s, effect: { type: 'quit' } };
  if (input === '?') return { ui: { ...s, help: !ui.help }, effect: null };
  if (ui.help && (key.escape || key.return)) return { ui: { ...s, help: false }, effect: null };
  if (input === '/') return { ui: { ...s, draft: ui.filter, help: false }, effect: null };
  if (input === 'h') {
    const id = ui.screen === 'call' ? ui.selectedId : (move(rows, ui.selectedId, 0) ?? null);
    if (id === null) return { ui: { ...s, message: 'no call to hang up' }, effect: null };
    if (ended(id)) return { ui: { ...s, selectedId: id, message: `${id} has already ended` }, effect: null };
    return { ui: { ...s, selectedId: id, confirmHangup: id }, effect: null };
  }
  if (ui.screen === 'call') {
    if (key.escape || key.backspace || key.delete) return { ui: { ...s, screen: 'list' }, effect: null };
    return { ui: s, effect: null };
  }
  if (key.upArrow || input === 'k') return { ui: { ...s, selectedId: move(rows, ui.selectedId, -1) }, effect: null };
  if (key.downArrow || input === 'j') return { ui: { ...s, selectedId: move(rows, ui.selectedId, 1) }, effect: null };
  if (key.return) {
    const id = move(rows, ui.selectedId, 0);
    return { ui: id === null ? s : { ...s, screen: 'call', selectedId: id }, effect: null };
  }
  if (key.escape && ui.filter !== '') return { ui: { ...s, filter: '' }, effect: null };
  return { ui: s, effect: null };
}

/**
 * Hands the keys of one read of terminal input to `handle`, one by one. Ink reports what arrives
 * together (typed fast, pasted, or a key and Enter read in one go, as a terminal multiplexer
 * often delivers them) as a single string: each character is then a key of its own, except
 * while a filter is typed (`drafting()`), where a run of text is taken whole; a carriage return
 * or line feed in it is Enter. A single key, or one with Ctrl or Meta, is handed on as it came.
 */
export function eachKey(input: string, key: KeyInfo, drafting: () => boolean, handle: (input: string, key: KeyInfo) => void): void {
  if (input.length <= 1 || key.ctrl || key.meta) {
    handle(input, key);
    return;
  }
  let text = '';
  const flush = () => {
    if (text !== '') handle(text, {});
    text = '';
  };
  for (const ch of input) {
    if (ch === '\r' || ch === '\n') {
      flush();
      handle('', { return: true });
    } else if (drafting()) text += ch;
    else handle(ch, {});
  }
  flush();
}

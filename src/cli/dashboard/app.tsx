/**
 * `vagent dashboard` as a running Ink app: it loads the calls in progress, follows the event
 * stream into the model (./model.ts), handles keys (./keys.ts) and draws the frame
 * (./view.tsx). Events update the model as they come, and the screen is drawn at most every
 * {@link FRAME_MS} ms (and once a second, for the ticking durations), so a busy daemon costs a
 * bounded number of renders.
 *
 * This module loads Ink and React; only `vagent dashboard` imports it (dynamically).
 */
import { render, Text, useApp, useInput, useStdout } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { CallStatus, EventView, StreamState } from '../../client/index.js';
import { eachKey, initialUi, onKey, type KeyInfo, type UiState } from './keys.js';
import { historyLoading, historyWanted, mergeHistory } from './history.js';
import { applyEvent, emptyModel, prune, seedCalls, visibleRows, withBudget } from './model.js';
import { DashboardView, type ConnState, type DaemonStatus } from './view.js';

/**
 * At most one frame per this many milliseconds for events (5 a second; keys draw at once).
 * Measured with 200 calls each taking a turn every 3 s at 120×40: ~14 % of one core at 5
 * frames a second, ~17 % at 10 — most of it Ink measuring and cutting the text of the cells.
 */
export const FRAME_MS = 200;

/** Calls whose history is fetched at once, at most (the rest wait their turn). */
const HISTORY_AT_ONCE = 4;

/** The smallest terminal the dashboard draws in; a smaller one gets a one-line note instead. */
const MIN_WIDTH = 80;
const MIN_HEIGHT = 24;

/** What the dashboard reads from and does to the daemon (the client, or a stand-in in tests). */
export interface DashboardSource {
  /** The daemon's address, shown in the header. */
  url: string;
  /** The calls to start from (`GET /v1/calls`, newest first). */
  listCalls(): Promise<CallStatus[]>;
  /**
   * The day's spend and budget, the tenant and the daemon's status (each null when not
   * available), or null for none of them.
   */
  status(): Promise<{
    budget: { spent_inr: number; budget_inr: number | null } | null;
    tenant?: string | null;
    daemon: DaemonStatus;
  } | null>;
  /** The event stream from now on (reconnecting by itself), until `signal` aborts. */
  events(options: { signal: AbortSignal; onState: (state: StreamState) => void }): AsyncIterable<EventView>;
  /**
   * The events of one call so far, oldest first (`GET /v1/events?call_id=`, page by page up to
   * a cap); `complete` false when the cap cut them.
   */
  callHistory(callId: string): Promise<{ events: EventView[]; complete: boolean }>;
  /** Hangs up a call; resolves to a line for the footer. */
  hangUp(callId: string): Promise<string>;
}

/** Props of {@link Dashboard}. */
export interface DashboardProps {
  source: DashboardSource;
  /** Use colours (false under NO_COLOR). */
  color: boolean;
  /** The terminal's size; read from stdout (and its resizes) when left out. */
  size?: { width: number; height: number };
  /** The clock, epoch seconds (tests pass a fixed one). */
  now?: () => number;
  /** Milliseconds a footer message stays (default {@link MESSAGE_MS}). */
  messageMs?: number;
}

/** A footer message (a hang-up's outcome) stays this many milliseconds, or until the next key. */
export const MESSAGE_MS = 5000;

const realNow = () => Date.now() / 1000;

/** The terminal's size from Ink's stdout, following its `resize` events; 80×24 when it says none. */
function useTerminalSize(fixed: { width: number; height: number } | undefined) {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => ({ width: stdout.columns || 80, height: stdout.rows || 24 }));
  useEffect(() => {
    if (fixed) return;
    const onResize = () => setSize({ width: stdout.columns || 80, height: stdout.rows || 24 });
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout, fixed]);
  return fixed ?? size;
}

/** The dashboard: the model kept in a ref, the frame redrawn at most every {@link FRAME_MS} ms. */
export function Dashboard({ source, color, size: fixedSize, now = realNow, messageMs = MESSAGE_MS }: DashboardProps) {
  const { exit } = useApp();
  const size = useTerminalSize(fixedSize);
  const model = useRef(emptyModel(now()));
  const dirty = useRef(true);
  const [, setFrame] = useState(0);
  const [ui, setUiState] = useState<UiState>(initialUi);
  // Keys typed faster than a render must each see the state the one before left.
  const uiNow = useRef(ui);
  const setUi = (next: UiState | ((u: UiState) => UiState)) => {
    uiNow.current = typeof next === 'function' ? next(uiNow.current) : next;
    setUiState(uiNow.current);
  };
  const [conn, setConn] = useState<ConnState>({ state: 'connecting' });
  const [status, setStatus] = useState<DaemonStatus | null>(null);

  useEffect(() => {
    const stop = new AbortController();
    const changed = () => {
      dirty.current = true;
    };
    // The history of each call first seen after its first event, a few calls at a time.
    let loading = 0;
    const loadHistories = () => {
      while (loading < HISTORY_AT_ONCE && !stop.signal.aborted) {
        const id = historyWanted(model.current)[0];
        if (id === undefined) return;
        model.current = historyLoading(model.current, [id]);
        loading += 1;
        source
          .callHistory(id)
          .then(
            ({ events, complete }) => {
              model.current = mergeHistory(model.current, id, events, complete);
            },
            () => {
              model.current = mergeHistory(model.current, id, [], false);
            },
          )
          .finally(() => {
            loading -= 1;
            changed();
            loadHistories();
          });
      }
    };
    void (async () => {
      try {
        for await (const e of source.events({
          signal: stop.signal,
          onState: (s) =>
            setConn(s.state === 'connected' ? { state: 'live' } : { state: 'reconnecting', attempt: s.attempt, reason: s.reason }),
        })) {
          model.current = applyEvent(model.current, e);
          changed();
        }
      } catch (err) {
        if (!stop.signal.aborted) setConn({ state: 'failed', reason: (err as Error).message });
      }
    })();
    source.listCalls().then(
      (calls) => {
        model.current = seedCalls(model.current, calls);
        changed();
        loadHistories();
      },
      (err: unknown) => setUi((u) => ({ ...u, message: `could not list calls: ${(err as Error).message}` })),
    );
    source.status().then(
      (s) => {
        if (s === null) return;
        if (s.budget) model.current = withBudget(model.current, s.budget);
        if (s.tenant) model.current = { ...model.current, tenant: model.current.tenant ?? s.tenant };
        setStatus(s.daemon);
        changed();
      },
      () => undefined,
    );
    let second = Math.floor(now());
    const timer = setInterval(() => {
      const t = now();
      if (Math.floor(t) !== second) {
        second = Math.floor(t);
        model.current = prune(model.current, t);
        dirty.current = true;
      }
      if (dirty.current) {
        dirty.current = false;
        loadHistories();
        setFrame((f) => f + 1);
      }
    }, FRAME_MS);
    return () => {
      stop.abort();
      clearInterval(timer);
    };
  }, [source]);

  const nowS = now();
  const rows = visibleRows(model.current, nowS, ui.filter);

  const handleKey = (input: string, key: KeyInfo) => {
    const { ui: next, effect } = onKey(
      uiNow.current,
      input,
      key,
      visibleRows(model.current, now(), uiNow.current.filter),
      (id) => model.current.calls[id]?.phase === 'ended',
    );
    setUi(next);
    if (effect?.type === 'quit') exit();
    if (effect?.type === 'hangup') {
      setUi((u) => ({ ...u, message: `hanging up ${effect.callId}…` }));
      source.hangUp(effect.callId).then(
        (line) => setUi((u) => ({ ...u, message: line })),
        (err: unknown) => setUi((u) => ({ ...u, message: `hang-up failed: ${(err as Error).message}` })),
      );
    }
  };
  // A footer message gives the keys back after a while, not only on the next key.
  useEffect(() => {
    const shown = ui.message;
    if (shown === null) return;
    const timer = setTimeout(() => setUi((u) => (u.message === shown ? { ...u, message: null } : u)), messageMs);
    return () => clearTimeout(timer);
  }, [ui.message, messageMs]);
  useInput((input, key) => eachKey(input, key, () => uiNow.current.draft !== null, handleKey));

  if (size.width < MIN_WIDTH || size.height < MIN_HEIGHT)
    return (
      <Text wrap="truncate-end">
        vagent dashboard needs {MIN_WIDTH}×{MIN_HEIGHT} or more (this terminal: {size.width}×{size.height}); q quits
      </Text>
    );
  return (
    <DashboardView
      model={model.current}
      ui={ui}
      rows={rows}
      nowS={nowS}
      width={size.width}
      height={size.height}
      color={color}
      conn={conn}
      url={source.url}
      status={status}
    />
  );
}

/** The terminal's alternate screen (xterm): the dashboard draws there, and the shell's scrollback is left as it was. */
const ALT_SCREEN_ON = '\u001b[?1049h';
const ALT_SCREEN_OFF = '\u001b[?1049l';

/** Runs the dashboard on the terminal until `q` or Ctrl-C. */
export async function runDashboard(source: DashboardSource, color: boolean): Promise<void> {
  process.stdout.write(ALT_SCREEN_ON);
  try {
    const app = render(<Dashboard source={source} color={color} />, { exitOnCtrlC: true, patchConsole: true, maxFps: 10 });
    await app.waitUntilExit();
  } finally {
    process.stdout.write(ALT_SCREEN_OFF);
  }
}

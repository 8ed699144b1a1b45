/**
 * `vagent agent test --update` (docs/agent-tests.md "Recording expectations"): what a passing
 * run produced is written back into its scenario file as the expectations of the turns (and
 * scenarios) that have none — the reply, the step after it, the slots it captured or changed,
 * `ended` on the turn that ended the conversation; the outcome, slots and `ended` of the whole
 * scenario. A scenario that failed its existing expectations is left as it is. The expectations
 * are inserted into the file's text (./insert-keys.ts), so everything else in it stays as the
 * operator wrote it: comments and the spaces before them, quoting, blank lines, flow or block style.
 */
import fs from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { isMap, parseDocument } from 'yaml';
import { insertKeys, type KeyAddition } from './insert-keys.js';
import type { LoadedScenarioFile } from './scenario-file.js';
import type { SlotValue } from './expect.js';
import type { FileRun, TurnRun } from './run.js';
import { plural } from '../output.js';

/** What `--update` did to one file. */
export interface UpdateOutcome {
  /** The new text of the file, or null when nothing is to be written. */
  text: string | null;
  /** One line for the operator. */
  message: string;
}

/** The slots of `turn` that are new or changed since `before`. */
function changedSlots(before: Record<string, SlotValue>, turn: TurnRun): Record<string, SlotValue> {
  const out: Record<string, SlotValue> = {};
  for (const [k, v] of Object.entries(turn.slots)) if (before[k] !== v) out[k] = v;
  return out;
}

/** The expectations recorded for one turn. */
function turnExpect(before: Record<string, SlotValue>, turn: TurnRun): Record<string, unknown> {
  const slots = changedSlots(before, turn);
  return {
    reply_contains: turn.reply,
    step: turn.step,
    layer: turn.layer,
    ...(Object.keys(slots).length > 0 ? { slots } : {}),
    ...(turn.ended ? { ended: true } : {}),
  };
}

/**
 * `loaded`'s text with `additions` inserted, checked: it must parse to what the `yaml` Document
 * API makes of the same additions. Should a layout defeat the insertion (it cannot place a key,
 * or the text parses to other values), the document is printed again instead: the same values,
 * in the `yaml` package's formatting.
 */
function recorded(loaded: LoadedScenarioFile, additions: readonly KeyAddition[]): string {
  const model = loaded.doc.clone();
  for (const a of additions) model.setIn([...a.path, a.key], model.createNode(a.value));
  const inserted = insertKeys(loaded.text, loaded.doc, additions, loaded.file.toLowerCase().endsWith('.json'));
  if (inserted !== null) {
    const again = parseDocument(inserted);
    if (again.errors.length === 0 && isDeepStrictEqual(again.toJS({ maxAliasCount: 100 }), model.toJS({ maxAliasCount: 100 })))
      return inserted;
  }
  return model.toString({ lineWidth: 0 });
}

/**
 * The new text of `loaded`'s file with `run`'s results recorded where expectations are missing.
 * @returns `text: null` when nothing changed, no scenario passed, or the file changed on disk since it was read
 */
export function updateFile(loaded: LoadedScenarioFile, run: FileRun): UpdateOutcome {
  const additions: KeyAddition[] = [];
  let turns = 0;
  let scenarios = 0;
  let skipped = 0;
  let aliased = 0;
  /** Adds `value` as `expect` of the mapping at `path` unless it is not written there (an alias). */
  const add = (path: (string | number)[], value: Record<string, unknown>): boolean => {
    if (!isMap(loaded.doc.getIn(path, true))) {
      aliased++;
      return false;
    }
    additions.push({ path, key: 'expect', value });
    return true;
  };
  loaded.scenarios.scenarios.forEach((scenario, i) => {
    const ran = run.scenarios[i];
    if (!ran?.passed) {
      skipped++;
      return;
    }
    let before: Record<string, SlotValue> = {};
    scenario.turns.forEach((turn, j) => {
      const t = ran.turns[j];
      if (!t) return;
      if (turn.expect === undefined && add(['scenarios', i, 'turns', j], turnExpect(before, t))) turns++;
      before = t.slots;
    });
    if (scenario.expect === undefined && ran.session) {
      const s = ran.session;
      const expect = {
        ...(s.outcome !== null ? { outcome: s.outcome } : {}),
        ...(Object.keys(s.slots).length > 0 ? { slots: s.slots } : {}),
        ended: s.ended,
      };
      if (add(['scenarios', i], expect)) scenarios++;
    }
  });
  const left =
    (skipped > 0 ? `; ${plural(skipped, 'failing scenario')} left as they were` : '') +
    (aliased > 0
      ? `; ${aliased} turn${aliased === 1 ? '' : 's'} or scenario${aliased === 1 ? '' : 's'} written as aliases (*name) left as they were`
      : '');
  if (turns === 0 && scenarios === 0) return { text: null, message: `${loaded.file}: nothing to record${left}` };
  let current: string | null = null;
  try {
    current = fs.readFileSync(loaded.file, 'utf8');
  } catch {
    // Gone since: reported below.
  }
  if (current !== loaded.text) return { text: null, message: `${loaded.file}: changed on disk during the run; not updated` };
  return {
    text: recorded(loaded, additions),
    message: `${loaded.file}: recorded expectations for ${plural(turns, 'turn')} and ${plural(scenarios, 'scenario')}${left}`,
  };
}

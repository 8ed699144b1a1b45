/**
 * `vagent agent test --update` (docs/agent-tests.md "Recording expectations"): what a passing
 * run produced is written back into its scenario file as the expectations of the turns (and
 * scenarios) that have none — the reply, the step after it, the slots it captured or changed,
 * `ended` on the turn that ended the conversation; the outcome, slots and `ended` of the whole
 * scenario. A scenario that failed its existing expectations is left as it is. The file is
 * edited through the `yaml` package's Document API, so its comments and formatting are kept.
 */
import fs from 'node:fs';
import type { LoadedScenarioFile } from './scenario-file.js';
import type { SlotValue } from './expect.js';
import type { FileRun, TurnRun } from './run.js';

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
 * The new text of `loaded`'s file with `run`'s results recorded where expectations are missing.
 * @returns `text: null` when nothing changed, no scenario passed, or the file changed on disk since it was read
 */
export function updateFile(loaded: LoadedScenarioFile, run: FileRun): UpdateOutcome {
  const { doc } = loaded;
  let turns = 0;
  let scenarios = 0;
  let skipped = 0;
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
      if (turn.expect === undefined) {
        doc.setIn(['scenarios', i, 'turns', j, 'expect'], doc.createNode(turnExpect(before, t)));
        turns++;
      }
      before = t.slots;
    });
    if (scenario.expect === undefined && ran.session) {
      const s = ran.session;
      const expect = {
        ...(s.outcome !== null ? { outcome: s.outcome } : {}),
        ...(Object.keys(s.slots).length > 0 ? { slots: s.slots } : {}),
        ended: s.ended,
      };
      doc.setIn(['scenarios', i, 'expect'], doc.createNode(expect));
      scenarios++;
    }
  });
  const left = skipped > 0 ? `; ${skipped} failing scenario${skipped === 1 ? '' : 's'} left as they were` : '';
  if (turns === 0 && scenarios === 0) return { text: null, message: `${loaded.file}: nothing to record${left}` };
  let current: string | null = null;
  try {
    current = fs.readFileSync(loaded.file, 'utf8');
  } catch {
    // Gone since: reported below.
  }
  if (current !== loaded.text) return { text: null, message: `${loaded.file}: changed on disk during the run; not updated` };
  return {
    text: doc.toString({ lineWidth: 0 }),
    message: `${loaded.file}: recorded expectations for ${turns} turn${turns === 1 ? '' : 's'} and ${scenarios} scenario${scenarios === 1 ? '' : 's'}${left}`,
  };
}

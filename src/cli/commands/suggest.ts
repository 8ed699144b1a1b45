/**
 * "Did you mean …?" after an unknown command, only for a near miss: a typo of one edit in a
 * short name, two in a longer one (optimal string alignment distance: insertions, deletions,
 * substitutions and swaps of two neighbours, the Damerau–Levenshtein variant commander uses).
 * Commander's own suggestion takes anything within three edits and 40% alike, so `vagent bogus`
 * got "Did you mean logout?"; a guess that far off misleads more than it helps.
 */
import type { Command } from 'commander';

/** The optimal string alignment distance between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_r, i) => [i]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate `word` is a near miss of, or undefined: at most one edit away for names of up to
 * five characters, two for longer ones; the closest wins, the first listed on a tie.
 */
export function nearMiss(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  if (w.length < 2 || w.length > 64) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    if (name.length < 2) continue;
    const limit = Math.min(w.length, name.length) <= 5 ? 1 : 2;
    const distance = editDistance(w, name);
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/**
 * Refuses an unknown subcommand of `cmd` as commander does (`error: unknown command 'x'`, exit
 * 2), with "(Did you mean …?)" only for a {@link nearMiss} among its visible commands and aliases.
 * @throws CommanderError code `commander.unknownCommand` (through `cmd.error`)
 */
export function unknownCommand(cmd: Command, name: string): never {
  const names = cmd
    .createHelp()
    .visibleCommands(cmd)
    .flatMap((c) => [c.name(), ...c.aliases()]);
  const near = nearMiss(name, names);
  return cmd.error(`error: unknown command '${name}'${near ? `\n(Did you mean ${near}?)` : ''}`, { code: 'commander.unknownCommand' });
}

import { configDefaults, defineConfig } from 'vitest/config';

// Two test files at a time even on a 2-core machine (vitest's default there is one): the
// end-to-end call tests spend most of their time waiting on real-time audio, not on a core.
// The store's tests time its WAL checkpoint worker thread against writes that never pause: with
// other files beside it the worker waits for a core and what they measure is the host, so they
// run alone, after the rest (a second project, later in `sequence.groupOrder`).
const ALONE = ['test/unit/store.test.ts'];

export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'suite', exclude: [...configDefaults.exclude, ...ALONE], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
  },
});

import { defineConfig } from 'vitest/config';

// Two test files at a time even on a 2-core machine (vitest's default there is one): the
// end-to-end call tests spend most of their time waiting on real-time audio, not on a core.
export default defineConfig({
  test: {
    maxWorkers: 2,
  },
});

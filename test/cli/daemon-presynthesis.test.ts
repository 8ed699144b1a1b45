/**
 * Shutdown during start-up pre-synthesis: a daemon whose agents' static
 * texts are not cached synthesises them in the background after it starts listening; a
 * SIGTERM then must stop that work before the store closes — no "database connection is not
 * open" error in its log, exit 0, lock released.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, requireBuild, startDaemon, stopAllDaemons } from '../support/daemon.js';

beforeAll(requireBuild);
afterEach(stopAllDaemons, 30_000);
afterAll(cleanupAll, 30_000);

/** The daemon's JSON log lines at level warn (40) or above. */
const problems = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message?: string } })
    .filter((e) => e.level >= 40);

describe('SIGTERM during start-up pre-synthesis', { timeout: 120_000 }, () => {
  it('stops pre-synthesis before the store closes: no error in the log, exit 0', async () => {
    // A state dir with the example agents whose audio cache is empty (cleared, or the agents
    // applied while speech was off): the next start pre-synthesises every agent, one by one.
    const first = await startDaemon();
    expect((await first.stop()).code).toBe(0);
    const audio = path.join(first.stateDir, 'audio');
    let interrupted = 0;
    for (let round = 0; round < 3; round++) {
      fs.rmSync(audio, { recursive: true, force: true });
      const d = await startDaemon({ stateDir: first.stateDir });
      const exit = await d.stop('SIGTERM');
      expect(exit).toEqual({ code: 0, signal: null });
      expect(d.stdout()).not.toContain('database connection is not open');
      expect(problems(d.stdout())).toEqual([]);
      expect(d.stdout()).toContain('"msg":"vagent stopped"');
      expect(fs.existsSync(path.join(first.stateDir, 'daemon.lock'))).toBe(false);
      // The stop really came in the middle: the shipped agents have some 90 static texts, which
      // take far longer to synthesise than this start and stop.
      const agentTexts = fs.existsSync(audio) ? fs.readdirSync(audio).filter((f) => f.endsWith('.wav')).length : 0;
      if (agentTexts < 40) interrupted += 1;
    }
    expect(interrupted).toBeGreaterThan(0);
  });
});

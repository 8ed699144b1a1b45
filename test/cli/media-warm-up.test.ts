/**
 * The first call after start (docs/media.md): a real daemon's media workers convert every
 * example agent's opening ahead of the first call — on a new state dir as pre-synthesis makes
 * them (`/v1/health` `media.warm_up`), and after a restart from the audio cache before the
 * daemon listens (its "media workers warmed up" log line). How fast the first call then hears
 * its opening is measured by bench/media.mjs, section (d), not here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { staticOpeningTexts } from '../../src/engine/static-texts.js';
import { toSpokenText } from '../../src/engine/spoken.js';
import { compileAgent } from '../../src/engine/state.js';
import { api, cleanupAll, requireBuild, ROOT, startDaemon, stopAllDaemons, type Daemon } from '../support/daemon.js';

beforeAll(requireBuild);
afterEach(stopAllDaemons, 30_000);
afterAll(cleanupAll, 30_000);

/** The distinct static opening clips of the shipped example agents (language and spoken text: one clip each). */
function exampleOpeningClips(): number {
  const dir = path.join(ROOT, 'config', 'agents');
  const clips = new Set<string>();
  for (const f of fs.readdirSync(dir).filter((n) => /\.ya?ml$/.test(n))) {
    const r = parseAgentDefinition(parse(fs.readFileSync(path.join(dir, f), 'utf8')));
    if (!r.ok) throw new Error(`${f} is not a valid agent`);
    const agent = compileAgent(r.agent);
    for (const t of staticOpeningTexts(agent)) clips.add(`${agent.def.voice ?? agent.def.language}|${toSpokenText(t, agent.def.language)}`);
  }
  return clips.size;
}

type WarmUp = { state: string; opening_clips: number } | undefined;
const warmUpOf = async (d: Daemon): Promise<WarmUp> =>
  ((await api(d, 'GET', '/v1/health')).body as { media?: { warm_up?: WarmUp } }).media?.warm_up;

/** `/v1/health`'s `media.warm_up` once it is `ready` with `clips` opening clips, or the last one seen after `timeoutMs`. */
async function warmUpReady(d: Daemon, clips: number, timeoutMs: number): Promise<WarmUp> {
  let warm: WarmUp;
  for (const until = Date.now() + timeoutMs; Date.now() < until;) {
    warm = await warmUpOf(d);
    if (warm?.state === 'ready' && warm.opening_clips === clips) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return warm;
}

describe('media warm-up at start', { timeout: 240_000 }, () => {
  it("converts every example agent's opening in the workers: as pre-synthesis makes them, and from the cache after a restart", async () => {
    const expected = exampleOpeningClips();
    expect(expected).toBeGreaterThan(1);

    // A new state dir: nothing cached yet; each opening is converted once it is synthesised.
    const first = await startDaemon();
    expect(await warmUpReady(first, expected, 150_000)).toEqual({ state: 'ready', opening_clips: expected });
    expect((await first.stop()).code).toBe(0);

    // A restart: the openings are in the audio cache, and the warm-up before listening converts them.
    const again = await startDaemon({ stateDir: first.stateDir });
    const line = await again.waitForOutput(/^.*"msg":"media workers warmed up".*$/m, 'stdout', 60_000);
    expect(JSON.parse(line[0]!)).toMatchObject({ component: 'media', opening_clips: expected });
    // (Pre-synthesis then hands the same openings over again: found converted, nothing more.)
    expect(await warmUpReady(again, expected, 30_000)).toEqual({ state: 'ready', opening_clips: expected });
  });
});

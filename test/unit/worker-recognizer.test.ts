/**
 * When a media worker's embedded recogniser starts its engine processes
 * (src/daemon/media-worker/worker-recognizer.ts): not at load, which comes before the daemon
 * listens, but at the first prewarm, once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerRecognizer } from '../../src/daemon/media-worker/worker-recognizer.js';

const opened: WorkerRecognizer[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

describe("a media worker's embedded recogniser", () => {
  it('starts no engine when loaded, the first answers’ engines at the first prewarm, and no more at the next', async () => {
    const r = new WorkerRecognizer();
    opened.push(r);
    r.prewarm(); // before load: nothing to start
    expect(r.recognizer).toBeNull();
    r.load(true);
    const recognizer = r.recognizer!;
    expect(recognizer.status.available, recognizer.status.reason).toBe(true);
    expect(recognizer.processCount).toBe(0);
    r.prewarm();
    // free speech, yes/no, a name, and the phone loop the grammars are scored against
    expect(recognizer.processCount).toBe(4);
    r.prewarm();
    r.load(true);
    expect(r.recognizer).toBe(recognizer);
    expect(recognizer.processCount).toBe(4);
    await r.close();
    expect(recognizer.processCount).toBe(0);
  });

  it('stays without a recogniser when its streams may not use the embedded one', async () => {
    const r = new WorkerRecognizer();
    opened.push(r);
    r.load(false);
    r.prewarm();
    expect(r.recognizer).toBeNull();
    await r.close();
  });
});

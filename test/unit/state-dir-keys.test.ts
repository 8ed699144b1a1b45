/**
 * Key files of the state dir (src/daemon/state-dir.ts; docs/architecture.md "State directory"):
 * `master.key` and `audio.key` are created 0600 on first use, read back unchanged, and refused when
 * group or others may read them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statePaths } from '../../src/config/paths.js';
import { loadAudioKey, loadMasterKey, StateDirError } from '../../src/daemon/state-dir.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-keys-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('state dir key files', () => {
  it('audio.key: created 0600 with 32 random bytes, stable, and apart from the master key', () => {
    const key = loadAudioKey(dir);
    expect(key).toHaveLength(32);
    expect(fs.statSync(statePaths(dir).audioKey).mode & 0o777).toBe(0o600);
    expect(loadAudioKey(dir).equals(key)).toBe(true);
    expect(loadMasterKey(dir, undefined).equals(key)).toBe(false);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-keys-'));
    try {
      expect(loadAudioKey(elsewhere).equals(key)).toBe(false);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('audio.key: a looser mode or a malformed file is refused, with a chmod hint', () => {
    const file = statePaths(dir).audioKey;
    loadAudioKey(dir);
    fs.chmodSync(file, 0o640);
    expect(() => loadAudioKey(dir)).toThrow(StateDirError);
    expect(() => loadAudioKey(dir)).toThrow(`${file} has mode 640; it must be readable by its owner only (chmod 600 ${file})`);
    fs.chmodSync(file, 0o600);
    fs.writeFileSync(file, 'short\n');
    expect(() => loadAudioKey(dir)).toThrow(/must be 32 bytes/);
  });
});

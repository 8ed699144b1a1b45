/**
 * Call recordings end to end (docs/media.md "Recordings"): `vagent call simulate` drives a
 * carrier stream into a real daemon (fake recogniser, the caller's lines spoken by the embedded
 * voice); an agent with `recording: dual` gets a 16 kHz two-channel WAV with the caller on the
 * left only while the caller speaks and the agent on the right only while it speaks, each at the
 * time the simulator measured; `GET /v1/calls/{id}` shows `recording_url`, `GET …/recording`
 * serves it (404 for another call), `vagent call show` prints it and `vagent call recording`
 * saves it. An agent with recording off (the default) gets none.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, api, cleanupAll, requireBuild, ROOT, runCli, startDaemon, tempDir, type Daemon } from '../support/daemon.js';
import { rms, wavChannels } from '../support/wav-energy.js';

let daemon: Daemon;
let key: string;
const env = () => ({ VAGENT_URL: daemon.url, VAGENT_API_KEY: key });

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon({ env: { VAGENT_RECOGNIZER: 'fake' } });
  key = await adminKey(daemon.stateDir);
  const clinic = parseYaml(fs.readFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), 'utf8')) as Record<
    string,
    unknown
  >;
  const put = await api(daemon, 'PUT', '/v1/agents/ag_clinic_recorded', {
    key,
    body: { ...clinic, id: 'ag_clinic_recorded', recording: 'dual' },
  });
  expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);
}, 60_000);
afterAll(cleanupAll, 30_000);

type Line = Record<string, unknown> & { event: string; at_ms: number };

async function simulate(agent: string, args: string[]): Promise<{ lines: Line[]; callId: string }> {
  const res = await runCli(['call', 'simulate', agent, ...args, '--json'], { env: env(), timeoutMs: 120_000 });
  expect(res.code, res.stderr).toBe(0);
  const lines = res.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
  const summary = lines.at(-1)! as Line & { session_id: string };
  return { lines, callId: summary.session_id.replace(/^se_/, 'cl_') };
}

/** The recording of `callId` once its media session closed it (its header's data size is set). */
async function finishedRecording(callId: string): Promise<Buffer> {
  const file = path.join(daemon.stateDir, 'recordings', `${callId}.wav`);
  for (let i = 0; i < 100; i++) {
    if (fs.existsSync(file)) {
      const buf = fs.readFileSync(file);
      if (buf.length > 44 && buf.readUInt32LE(40) === buf.length - 44) return buf;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no finished recording at ${file}`);
}

describe('call recordings', { timeout: 180_000 }, () => {
  it('records both parties of a simulated call, each on its channel at the time it spoke', async () => {
    const { lines, callId } = await simulate('ag_clinic_recorded', ['--say', 'Priya Sharma', '--say', 'yes', '--hang-up']);
    const wav = await finishedRecording(callId);
    const { sampleRate, channels } = wavChannels(wav);
    expect(sampleRate).toBe(16_000);
    expect(channels).toHaveLength(2);
    const [caller, agent] = channels as [Int16Array, Int16Array];

    // The simulator's times start when its socket opened; the recording's when the opening
    // started to play (the first reply_start), so the two differ by that offset.
    const opening = lines.find((l) => l.event === 'reply_start')!;
    const offset = opening.at_ms;
    const at = (l: Line): number => l.at_ms - offset;

    // Each caller line: energy on the left, at its time; the agent silent then (it listens).
    const starts = lines.filter((l) => l.event === 'line_start');
    const ends = lines.filter((l) => l.event === 'line_end');
    expect(starts).toHaveLength(2);
    for (let i = 0; i < starts.length; i++) {
      const from = at(starts[i]!) + 100;
      const to = at(ends[i]!) - 100;
      expect(to - from, 'a caller line lasts').toBeGreaterThan(200);
      expect(rms(caller, sampleRate, from, to), `caller line ${i} on the left`).toBeGreaterThan(300);
      expect(rms(agent, sampleRate, from, to), `the agent silent during caller line ${i}`).toBeLessThan(30);
      // Just before the caller's line (the agent's reply has ended, the caller not yet begun), the left is quiet.
      expect(rms(caller, sampleRate, at(starts[i]!) - 300, at(starts[i]!) - 50), `silence before caller line ${i}`).toBeLessThan(30);
    }

    // Each reply of the agent: energy on the right from its start; the caller silent meanwhile.
    const replies = lines.filter((l) => l.event === 'reply_start');
    const replyEnds = lines.filter((l) => l.event === 'reply_end');
    expect(replies.length).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < Math.min(replies.length, replyEnds.length); i++) {
      const from = at(replies[i]!) + 100;
      const to = Math.min(at(replyEnds[i]!), from + 1500);
      if (to - from < 200) continue;
      expect(rms(agent, sampleRate, from, to), `reply ${i} on the right`).toBeGreaterThan(300);
      expect(rms(caller, sampleRate, from, to), `the caller silent during reply ${i}`).toBeLessThan(30);
    }

    // Served: the URL in the call's view, the route, the CLI.
    const shown = await api(daemon, 'GET', `/v1/calls/${callId}`, { key });
    expect(shown.body.recording_url).toBe(`${daemon.url}/v1/calls/${callId}/recording`);
    // And in the end-of-call report (docs/events.md).
    const ended = await api(daemon, 'GET', `/v1/events?call_id=${callId}&types=call.ended`, { key });
    expect(ended.body.data.map((e: { data: { recording_url: string } }) => e.data.recording_url)).toEqual([shown.body.recording_url]);
    const got = await fetch(`${daemon.url}/v1/calls/${callId}/recording`, { headers: { authorization: `Bearer ${key}` } });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await got.arrayBuffer()).equals(wav)).toBe(true);
    const unauth = await fetch(`${daemon.url}/v1/calls/${callId}/recording`);
    expect(unauth.status).toBe(401);

    const show = await runCli(['call', 'show', callId], { env: env() });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`/v1/calls/${callId}/recording`);
    const out = path.join(tempDir('vagent-rec-'), 'call.wav');
    const saved = await runCli(['call', 'recording', callId, '-o', out], { env: env() });
    expect(saved.code, saved.stderr).toBe(0);
    expect(fs.readFileSync(out).equals(wav)).toBe(true);
    // A call's audio is private to the operator, as the state dir's copy is.
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);

    // Included in the operator's archive: copied beside it, named on the session's line.
    const dir = tempDir('vagent-rec-export-');
    const exported = await runCli([
      'admin',
      'export',
      '--state-dir',
      daemon.stateDir,
      '--output',
      path.join(dir, 'sessions.jsonl'),
      '--recordings',
      path.join(dir, 'recordings'),
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    const records = fs
      .readFileSync(path.join(dir, 'sessions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { calls: Array<{ call_id: string; recording_url: string | null }>; recording_file: string | null });
    const record = records.find((r) => r.calls[0]?.call_id === callId);
    expect(record?.recording_file).toBe(`${callId}.wav`);
    // Offline, the URL is built from public_url (here unset: the default address), as the audio links are.
    expect(record?.calls[0]?.recording_url).toMatch(new RegExp(`/v1/calls/${callId}/recording$`));
    expect(fs.readFileSync(path.join(dir, 'recordings', `${callId}.wav`)).equals(wav)).toBe(true);
  });

  it('records nothing for an agent with recording off, and says so', async () => {
    const { callId } = await simulate('ag_clinic_booking', ['--say', 'Priya Sharma', '--hang-up']);
    const shown = await api(daemon, 'GET', `/v1/calls/${callId}`, { key });
    expect(shown.body.recording_url).toBeNull();
    const ended = await api(daemon, 'GET', `/v1/events?call_id=${callId}&types=call.ended`, { key });
    expect(ended.body.data.map((e: { data: { recording_url: null } }) => e.data.recording_url)).toEqual([null]);
    expect(fs.existsSync(path.join(daemon.stateDir, 'recordings', `${callId}.wav`))).toBe(false);
    const got = await api(daemon, 'GET', `/v1/calls/${callId}/recording`, { key });
    expect(got.status).toBe(404);
    expect(got.body).toMatchObject({ error: { code: 'not_found', param: 'call_id' } });
    const saved = await runCli(['call', 'recording', callId, '-o', path.join(tempDir('vagent-rec-'), 'none.wav')], { env: env() });
    expect(saved.code).toBe(1);
    expect(saved.stderr).toContain('has no recording');

    // The tenant's setting, set by the operator beside the running daemon, records the same agent's next call (mono).
    const bad = await runCli(['admin', 'tenant', 'set', 'default', '--recording', 'stereo', '--state-dir', daemon.stateDir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: invalid_request: /m);
    expect(bad.stderr).toContain('--recording must be off, mono, dual or "default"');
    const set = await runCli(['admin', 'tenant', 'set', 'default', '--recording', 'mono', '--state-dir', daemon.stateDir]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('mono (both parties mixed)');
    const next = await simulate('ag_clinic_booking', ['--say', 'Priya Sharma', '--hang-up']);
    const mono = wavChannels(await finishedRecording(next.callId));
    expect(mono.channels).toHaveLength(1);
    expect(rms(mono.channels[0]!, mono.sampleRate, 0, 2000)).toBeGreaterThan(300); // the opening
    const unset = await runCli(['admin', 'tenant', 'set', 'default', '--recording', 'default', '--state-dir', daemon.stateDir]);
    expect(unset.code, unset.stderr).toBe(0);
  });

  it('answers a malformed or hostile call id as the call routes do (session_not_found, naming call_id), never a file', async () => {
    for (const id of ['cl_x%2F..%2Fmaster.key', '..%2F..%2Fmaster.key', 'cl_0', `cl_${'9'.repeat(40)}`]) {
      const got = await api(daemon, 'GET', `/v1/calls/${id}/recording`, { key });
      expect(got.status, id).toBe(404);
      expect(got.body, id).toMatchObject({ error: { code: 'session_not_found', param: 'call_id' } });
    }
  });
});

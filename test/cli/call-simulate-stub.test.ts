/**
 * `vagent call simulate` through the built binary against a stub daemon written here: the
 * HTTP routes the command reads (agent, sessions) and a Twilio media endpoint that hears the
 * `vagent_fake_transcripts` in order, replies with paced audio and marks, and hangs up after
 * its closing line. It checks the command's flow and output (the human view, `--json` lines,
 * a stream refused with 401) without the daemon's real endpoint; ./call-simulate.test.ts runs
 * the same against it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { CarrierStream } from '../../src/media/carriers/index.js';
import { requireBuild, runCli } from '../support/daemon.js';

const KEY = 'vk_stub_key';
const REFUSED_KEY = 'vk_http_only';
let url: string;
let server: http.Server;

interface StubSession {
  turns: Array<{ index: number; user_text: string; reply_text: string }>;
  status: 'open' | 'ended';
  heardDigits: string;
  params: Record<string, string>;
}
const sessions: StubSession[] = [];

/**
 * What this stub "mishears": "fever" as "the what" (a recogniser's mistake), and "five p m" as
 * "5 pm" (the same words to the slot extractors: not a mistake).
 */
const HEARD_AS: Record<string, string> = { fever: 'the what', 'five p m': '5 pm' };

/** Plays `frames` 20 ms μ-law frames at real time, then a mark; resolves when sent. */
function play(ws: WebSocket, stream: CarrierStream, frames: number, mark: string): void {
  const t0 = Date.now();
  let sent = 0;
  const tick = (): void => {
    if (ws.readyState !== ws.OPEN) return;
    const due = Math.min(frames, Math.floor((Date.now() - t0) / 20) + 2);
    for (; sent < due; sent++) ws.send(stream.writer.media(Buffer.alloc(160, 0x55)));
    if (sent < frames) setTimeout(tick, 20);
    else ws.send(stream.writer.mark(mark));
  };
  tick();
}

function onStream(ws: WebSocket): void {
  const stream = new CarrierStream('twilio');
  const s: StubSession = { turns: [], status: 'open', heardDigits: '', params: {} };
  let transcripts: string[] = [];
  let speechFrames = 0;
  let quietFrames = 0;
  ws.on('message', (data) => {
    const e = stream.receive(data.toString('utf8'));
    if (e.type === 'start') {
      s.params = e.customParameters;
      transcripts = JSON.parse(e.customParameters.vagent_fake_transcripts ?? '[]') as string[];
      sessions.push(s);
      play(ws, stream, 25, 'opening');
    } else if (e.type === 'media') {
      const speech = e.payload.some((b) => b !== 0xff && b !== 0x7f);
      if (speech) {
        speechFrames++;
        quietFrames = 0;
      } else if (speechFrames > 0 && ++quietFrames === 10) {
        // 200 ms of silence after speech: the end of an utterance.
        speechFrames = 0;
        const said = transcripts.shift() ?? '';
        const heard = HEARD_AS[said] ?? said;
        const last = transcripts.length === 0;
        s.turns.push({
          index: s.turns.length,
          user_text: heard,
          reply_text: last ? 'Thank you, goodbye!' : `You said ${heard}.`,
        });
        play(ws, stream, 15, last ? 'closing' : `reply-${s.turns.length}`);
      }
    } else if (e.type === 'dtmf') {
      s.heardDigits += e.digit;
    } else if (e.type === 'markAck' && e.name === 'closing') {
      s.status = 'ended';
      ws.close(1000, 'call ended');
    } else if (e.type === 'stop') {
      s.status = 'ended';
    }
  });
  ws.on('close', () => {
    s.status = 'ended';
  });
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

beforeAll(async () => {
  requireBuild();
  const wss = new WebSocketServer({ noServer: true });
  server = http.createServer((req, res) => {
    // Unauthenticated, as the daemon's: the simulator asks what hears the agent's language first.
    if (req.url?.startsWith('/v1/health')) {
      return json(res, 200, {
        status: 'ok',
        recognition: { enabled: true, for_language: { language: 'en-IN', provider: 'fake', fallback: null } },
      });
    }
    const auth = req.headers.authorization;
    if (auth !== `Bearer ${KEY}` && auth !== `Bearer ${REFUSED_KEY}`)
      return json(res, 401, { error: { code: 'unauthorized', message: 'bad key' } });
    const now = Math.floor(Date.now() / 1000);
    if (req.url === '/v1/agents/ag_stub') {
      return json(res, 200, {
        id: 'ag_stub',
        name: 'Stub',
        description: null,
        direction: 'inbound',
        language: 'en-IN',
        version: 1,
        digest: 'x',
        created_at: now,
        updated_at: now,
        audio: {},
        definition: {},
      });
    }
    if (req.url?.startsWith('/v1/sessions?')) {
      return json(res, 200, {
        data: sessions.map((_, i) => ({ session_id: `se_${i + 1}`, agent_id: 'ag_stub', status: 'open', created_at: now })).reverse(),
        has_more: false,
        next_cursor: null,
      });
    }
    const m = /^\/v1\/sessions\/se_(\d+)$/.exec(req.url ?? '');
    const s = m ? sessions[Number(m[1]) - 1] : undefined;
    if (s) {
      return json(res, 200, {
        session_id: Number(m![1]),
        turns: s.turns,
        total_cost_inr: 0.5,
        llm_cost_inr: 0,
        tts_cost_inr: 0.1,
        stt_cost_inr: 0.4,
        stt_seconds: 12.5,
        session: {
          agent_id: 'ag_stub',
          status: s.status,
          outcome: s.status === 'ended' ? 'completed' : null,
          steps: [{ id: 'name', status: 'done', attempts: 1, slot: 'patient_name', value: s.turns[0]?.user_text ?? null }],
        },
      });
    }
    return json(res, 404, { error: { code: 'not_found', message: `no route ${req.url}` } });
  });
  server.on('upgrade', (req, socket, head) => {
    if (req.url !== '/v1/media/twilio' || req.headers.authorization !== `Bearer ${KEY}`) {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, onStream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const simulate = (args: string[], key = KEY) =>
  runCli(['call', 'simulate', 'ag_stub', '--transport', 'twilio', ...args], {
    env: { VAGENT_URL: url, VAGENT_API_KEY: key },
    timeoutMs: 60_000,
  });

describe('vagent call simulate (stub daemon)', { timeout: 90_000 }, () => {
  it('--json: one event per line, from the call to the summary', async () => {
    const res = await simulate(['--say', 'hello there', '--dtmf', '42#', '--say', 'Priya Sharma', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown> & { event: string });
    expect(lines[0]).toMatchObject({ event: 'call', agent_id: 'ag_stub', transport: 'twilio', call_id: null });
    const events = lines.map((l) => l.event);
    expect(events).toEqual(
      expect.arrayContaining(['open', 'start', 'reply_start', 'reply_end', 'line_start', 'line_end', 'dtmf', 'mark', 'turn', 'closed']),
    );
    expect(events.indexOf('line_start')).toBeGreaterThan(events.indexOf('reply_end')); // the opening played first
    const s = sessions.at(-1)!;
    expect(s.params).toMatchObject({ agent_id: 'ag_stub', to: '+919876543210' });
    expect(JSON.parse(s.params.vagent_fake_transcripts!)).toEqual(['hello there', 'Priya Sharma']);
    expect(s.heardDigits).toBe('42#');
    expect(lines.filter((l) => l.event === 'turn').map((l) => [l.user_text, l.reply_text])).toEqual([
      ['hello there', 'You said hello there.'],
      ['Priya Sharma', 'Thank you, goodbye!'],
    ]);
    const summary = lines.at(-1)!;
    expect(summary).toMatchObject({
      event: 'summary',
      session_id: 'se_' + sessions.length,
      status: 'ended',
      outcome: 'completed',
      extracted: { patient_name: 'hello there' },
      stt_seconds: 12.5,
      close: { code: 1000, by: 'bot' },
    });
    const turns = summary.turns as Array<{ kind: string; latency_ms?: number }>;
    expect(turns.map((t) => t.kind)).toEqual(['say', 'dtmf', 'say']);
    expect(turns[0]!.latency_ms).toEqual(expect.any(Number));
    expect(turns[2]!.latency_ms).toEqual(expect.any(Number));
    expect((summary.frames as { marks_played: number }).marks_played).toBe(3);
  });

  it('people see the call as it happens: lines, what was heard, replies, latency, hang-up and summary', async () => {
    const res = await simulate(['--say', 'good morning', '--say', 'Asha Rao']);
    expect(res.code, res.stderr).toBe(0);
    const out = res.stdout;
    expect(out).toContain('is on the line as twilio');
    expect(out).toMatch(/caller\s+good morning/);
    expect(out).toMatch(/heard\s+good morning/);
    expect(out).toMatch(/agent\s+You said good morning\./);
    expect(out).toMatch(/first reply audio \d+ ms after the caller stopped/);
    expect(out).toContain('the agent hung up');
    expect(out).toMatch(/reply latency:\s+1: \d+ ms/);
    expect(out).toMatch(/patient_name\s+good morning/);
    expect(out).toMatch(/stt:\s+12\.5 s/);
  });

  it('each turn says what was said and whether it was heard so: a mishearing is marked, counted, and fails --strict naming the turn', async () => {
    const res = await simulate(['--say', 'five p m', '--dtmf', '42#', '--say', 'fever', '--say', 'Asha Rao', '--strict', '--json']);
    expect(res.code, res.stderr).toBe(1);
    const lines = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown> & { event: string });
    expect(lines.filter((l) => l.event === 'turn').map((l) => [l.index, l.user_text, l.said, l.match])).toEqual([
      [0, '5 pm', 'five p m', true],
      [1, 'the what', 'fever', false],
      [2, 'Asha Rao', 'Asha Rao', true],
    ]);
    expect(lines.at(-1)).toMatchObject({
      event: 'summary',
      mismatches: 1,
      misheard: [{ turn: 1, said: 'fever', heard: 'the what' }],
    });
    expect(JSON.parse(res.stderr.trim().split('\n').at(-1)!)).toEqual({
      error: { code: 'misheard', message: '1 line was misheard: turn 1 heard "the what" for "fever"' },
    });

    const human = await simulate(['--say', 'fever', '--say', 'Asha Rao']);
    expect(human.code, human.stderr).toBe(0); // without --strict a mishearing is shown, not failed
    expect(human.stdout).toMatch(/heard\s+"the what" ≠ said "fever".*misheard \(turn 0\)/);
    expect(human.stdout).toMatch(/heard\s+Asha Rao/);
    expect(human.stdout).toMatch(/mismatches:\s+1 \(turn 0\)/);
  });

  it('--strict with every line heard as said exits 0', async () => {
    const res = await simulate(['--say', 'five p m', '--say', 'Asha Rao', '--strict']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/mismatches:\s+none/);
    expect(res.stdout).not.toContain('≠');
  });

  it('a stream the daemon refuses with 401: exit 1, unauthorized, nothing streamed', async () => {
    const before = sessions.length;
    const res = await simulate(['--say', 'hello', '--json'], REFUSED_KEY);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stderr.trim().split('\n').at(-1)!)).toMatchObject({ error: { code: 'unauthorized' } });
    expect(res.stderr).not.toContain(REFUSED_KEY);
    expect(sessions.length).toBe(before);
  });
});

/**
 * Room media of the development fake LiveKit: the WebSocket vagent's development room
 * driver joins (./room-fake.ts, path `/fake-room`), and a scripted callee for each
 * phone participant, who speaks synthesised lines, presses keys and hangs up as its script says.
 *
 * The callee behaves like a person on a phone: it waits for vagent's reply to finish (the room
 * audio from vagent quiet for `replyQuietMs` after speech), then says its next line in real
 * time; with `bargeInAfterMs` it talks over vagent instead. Everything it heard and did is kept
 * in a {@link CalleeLog} per room for tests and the bench.
 */
import type http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { resample } from '../media/audio-resample.js';
import { FAKE_ROOM_FRAME_SAMPLES, FAKE_ROOM_PATH, FAKE_ROOM_RATE, type FakeRoomMessage, type FakeRoomParticipant } from './room-fake.js';

/** One step of a callee's script. */
export type CalleeStep =
  /** Say `text` (synthesised with the embedded voice in `language`) or `pcm` (mono PCM16 at `sampleRate`). */
  | { say: string; pcm?: Int16Array; sampleRate?: number; bargeInAfterMs?: number }
  /** Press keys, 250 ms apart (RFC 4733 events through the room). */
  | { dtmf: string }
  /** Let `ms` pass. */
  | { wait: number }
  /** Hang up (the phone participant leaves). */
  | { hangup: true };

/** A callee's script and voice. */
export interface CalleeScript {
  steps: CalleeStep[];
  /** BCP-47 language of `say` lines; default `en-IN`. */
  language?: string;
  /** vagent quiet this long after speaking = its reply is over, ms; default 700. */
  replyQuietMs?: number;
  /** Speak anyway when no reply came for this long, ms; default 15 000. */
  replyTimeoutMs?: number;
}

/** What happened on one room's call, times in ms from the callee's start. */
export interface CalleeLog {
  room: string;
  /** Lines said: when they started and ended, and whether vagent was speaking when they started. */
  lines: Array<{ text: string; startMs: number; endMs: number; overAgent: boolean }>;
  /** Keys pressed. */
  dtmf: string[];
  /** Spans of vagent's audio above the speech level. */
  agentSpeech: Array<{ startMs: number; endMs: number }>;
  /** Total vagent audio received, ms. */
  agentAudioMs: number;
  /** The script finished (or the call ended first). */
  done: boolean;
}

/** How the hub talks to the fake server that owns the rooms. */
export interface RoomHost {
  /** Checks a room token (HS256, `video.roomJoin` for a room): the room and identity, or why not. */
  verify(token: string): { room: string; identity: string } | string;
  /** The phone and other participants of `room` now (vagent excluded). */
  participants(room: string): FakeRoomParticipant[];
  /** The callee script for `room`'s phone participant, or null for a silent callee. */
  script(room: string, participant: FakeRoomParticipant): CalleeScript | null;
  /** vagent joined `room` as `identity` (the server answers an inbound call then). */
  joined(room: string, identity: string): void;
  /** The callee hangs up: the server removes the phone participant (and sends its webhook). */
  calleeHangup(room: string, identity: string): void;
  /** vagent left `room`. */
  left(room: string, identity: string): void;
}

/** Speech level of vagent's audio for the callee's ears (absolute PCM16 sample peak). */
const SPEECH_PEAK = 600;
/** Audio frames are sent in batches of this many 10 ms frames. */
const BATCH_FRAMES = 2;

interface Conn {
  ws: WebSocket;
  room: string;
  identity: string;
}

/** The fake's room media. */
export class FakeRoomHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
  private readonly conns = new Map<string, Conn>();
  private readonly callees = new Map<string, Callee>();
  /** Logs by room name, kept after the call. */
  readonly logs = new Map<string, CalleeLog>();

  constructor(
    private readonly host: RoomHost,
    private readonly synthesize: (text: string, language: string) => Promise<{ samples: Int16Array; sampleRate: number }>,
  ) {}

  /** Serves the room WebSocket on `server`. */
  attach(server: http.Server): void {
    server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname !== FAKE_ROOM_PATH) {
        socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
        return;
      }
      const who = this.host.verify(url.searchParams.get('access_token') ?? '');
      if (typeof who === 'string') {
        socket.end(`HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\n\r\n${who}`);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, who.room, who.identity));
    });
  }

  /** Drops every room connection and stops the callees. */
  close(): void {
    for (const c of this.callees.values()) c.stop();
    for (const c of this.conns.values()) c.ws.terminate();
    this.wss.close();
  }

  /** A participant joined `room` (told to vagent if it is there). */
  participantJoined(room: string, p: FakeRoomParticipant): void {
    this.send(room, { type: 'participant_connected', participant: p });
    this.maybeStart(room);
  }

  /** A participant's attributes changed; an `active` phone participant starts its callee. */
  attributesChanged(room: string, identity: string, changed: Record<string, string>): void {
    this.send(room, { type: 'attributes_changed', identity, changed });
    this.maybeStart(room);
  }

  /** A participant left `room`; vagent itself leaving (removed, room deleted) closes its socket. */
  participantLeft(room: string, identity: string): void {
    const conn = this.conns.get(room);
    if (conn && conn.identity === identity) {
      conn.ws.close(1000, 'removed');
      return;
    }
    const callee = this.callees.get(room);
    if (callee && callee.identity === identity) callee.stop();
    this.send(room, { type: 'participant_disconnected', identity });
  }

  /** The log of `room`'s call, if it had a callee. */
  log(room: string): CalleeLog | undefined {
    return this.logs.get(room);
  }

  private accept(ws: WebSocket, room: string, identity: string): void {
    this.conns.get(room)?.ws.close(1000, 'replaced');
    const conn: Conn = { ws, room, identity };
    this.conns.set(room, conn);
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.callees.get(room)?.hear(data);
    });
    ws.on('close', () => {
      if (this.conns.get(room) !== conn) return;
      this.conns.delete(room);
      this.callees.get(room)?.agentLeft();
      this.host.left(room, identity);
    });
    ws.on('error', () => undefined);
    const list = this.host.participants(room).filter((p) => p.identity !== identity);
    ws.send(JSON.stringify({ type: 'joined', room, participants: list } satisfies FakeRoomMessage));
    this.host.joined(room, identity);
    this.maybeStart(room);
  }

  private send(room: string, msg: FakeRoomMessage): void {
    const conn = this.conns.get(room);
    if (conn && conn.ws.readyState === conn.ws.OPEN) conn.ws.send(JSON.stringify(msg));
  }

  /** Starts the callee once vagent is in the room and the phone participant is active. */
  private maybeStart(room: string): void {
    if (this.callees.has(room) || !this.conns.has(room)) return;
    const phone = this.host.participants(room).find((p) => p.kind === 3 && p.attributes['sip.callStatus'] === 'active');
    if (!phone) return;
    const script = this.host.script(room, phone);
    const log: CalleeLog = { room, lines: [], dtmf: [], agentSpeech: [], agentAudioMs: 0, done: false };
    this.logs.set(room, log);
    const callee = new Callee(room, phone.identity, script, log, {
      send: (msg) => this.send(room, msg),
      audio: (buf) => {
        const conn = this.conns.get(room);
        if (conn && conn.ws.readyState === conn.ws.OPEN) conn.ws.send(buf);
      },
      hangup: () => this.host.calleeHangup(room, phone.identity),
      synthesize: this.synthesize,
    });
    this.callees.set(room, callee);
    this.send(room, { type: 'track_published', identity: phone.identity });
    callee.start();
  }
}

interface CalleeIo {
  send(msg: FakeRoomMessage): void;
  audio(buf: Buffer): void;
  hangup(): void;
  synthesize(text: string, language: string): Promise<{ samples: Int16Array; sampleRate: number }>;
}

/** One scripted person on the phone. */
class Callee {
  private readonly t0 = Date.now();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private agentLoudAt = -Infinity;
  private agentSpeechStart: number | null = null;
  private agentSpokeSinceStep = false;
  /** Audio being said: samples at 48 kHz and the next sample to send. */
  private speaking: { pcm: Int16Array; at: number; line: CalleeLog['lines'][number] } | null = null;
  private framesSent = 0;

  constructor(
    readonly room: string,
    readonly identity: string,
    private readonly script: CalleeScript | null,
    private readonly log: CalleeLog,
    private readonly io: CalleeIo,
  ) {}

  private now(): number {
    return Date.now() - this.t0;
  }

  start(): void {
    // Paced by elapsed time (no drift): frames are due every 10 ms from the start.
    this.timer = setInterval(() => this.pump(), 20);
    void this.run()
      .catch(() => undefined)
      .finally(() => {
        this.log.done = true;
      });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.log.done = true;
  }

  agentLeft(): void {
    this.stop();
  }

  /** vagent's audio (10 ms PCM16 frames at 48 kHz). */
  hear(data: Buffer): void {
    const n = data.byteLength >> 1;
    this.log.agentAudioMs += (n * 1000) / FAKE_ROOM_RATE;
    let peak = 0;
    for (let i = 0; i + 1 < data.byteLength; i += 2) {
      const v = Math.abs(data.readInt16LE(i));
      if (v > peak) peak = v;
    }
    const t = this.now();
    if (peak >= SPEECH_PEAK) {
      this.agentLoudAt = t;
      this.agentSpokeSinceStep = true;
      if (this.agentSpeechStart === null) this.agentSpeechStart = t;
    } else if (this.agentSpeechStart !== null && t - this.agentLoudAt > 150) {
      this.log.agentSpeech.push({ startMs: this.agentSpeechStart, endMs: this.agentLoudAt });
      this.agentSpeechStart = null;
    }
  }

  private agentSpeaking(): boolean {
    return this.now() - this.agentLoudAt < 150;
  }

  /** Sends the audio due now: the line being said, or silence. */
  private pump(): void {
    if (this.stopped) return;
    const due = Math.floor(this.now() / 10);
    while (this.framesSent < due) {
      const frame = new Int16Array(FAKE_ROOM_FRAME_SAMPLES * BATCH_FRAMES);
      const s = this.speaking;
      if (s) {
        frame.set(s.pcm.subarray(s.at, s.at + frame.length));
        s.at += frame.length;
        if (s.at >= s.pcm.length) {
          s.line.endMs = this.now();
          this.speaking = null;
        }
      }
      this.io.audio(Buffer.from(frame.buffer));
      this.framesSent += BATCH_FRAMES;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** Waits for vagent's reply to finish (or `bargeInAfterMs` into it). */
  private async replyDone(bargeInAfterMs?: number): Promise<void> {
    const quiet = this.script?.replyQuietMs ?? 700;
    const deadline = this.now() + (this.script?.replyTimeoutMs ?? 15_000);
    while (!this.stopped && this.now() < deadline) {
      if (bargeInAfterMs !== undefined) {
        if (this.agentSpeechStart !== null && this.now() - this.agentSpeechStart >= bargeInAfterMs) return;
      } else if (this.agentSpokeSinceStep && !this.agentSpeaking() && this.now() - this.agentLoudAt >= quiet) {
        return;
      }
      await this.sleep(10);
    }
  }

  private async run(): Promise<void> {
    const script = this.script;
    if (!script) return;
    const language = script.language ?? 'en-IN';
    // Lines are synthesised before the call goes on, so none is late.
    const audio = await Promise.all(
      script.steps.map(async (step) => {
        if (!('say' in step)) return null;
        if (step.pcm) return resample(step.pcm, step.sampleRate ?? 16000, FAKE_ROOM_RATE);
        const out = await this.io.synthesize(step.say, language);
        return resample(out.samples, out.sampleRate, FAKE_ROOM_RATE);
      }),
    );
    for (let i = 0; i < script.steps.length && !this.stopped; i++) {
      const step = script.steps[i]!;
      if ('wait' in step) {
        await this.sleep(step.wait);
        continue;
      }
      if ('hangup' in step) {
        await this.replyDone();
        this.stop();
        this.io.hangup();
        return;
      }
      await this.replyDone('say' in step ? step.bargeInAfterMs : undefined);
      if (this.stopped) return;
      this.agentSpokeSinceStep = false;
      if ('dtmf' in step) {
        for (const digit of step.dtmf) {
          if (this.stopped) return;
          this.io.send({ type: 'dtmf', identity: this.identity, code: dtmfCode(digit), digit });
          this.log.dtmf.push(digit);
          await this.sleep(250);
        }
        continue;
      }
      const pcm = audio[i]!;
      const line = { text: step.say, startMs: this.now(), endMs: -1, overAgent: this.agentSpeaking() };
      this.log.lines.push(line);
      this.speaking = { pcm, at: 0, line };
      while (this.speaking && !this.stopped) await this.sleep(10);
      this.agentSpokeSinceStep = false;
    }
  }
}

/** RFC 4733 event code of a DTMF key. */
function dtmfCode(digit: string): number {
  if (/^[0-9]$/.test(digit)) return Number(digit);
  return ({ '*': 10, '#': 11, A: 12, B: 13, C: 14, D: 15 } as Record<string, number>)[digit] ?? 0;
}

/**
 * A callee script from text lines (the fake's `--callee` options and script files): a line is
 * said; `dtmf: 123#` presses keys; `wait: 1500` pauses; `hangup` hangs up; `barge: TEXT` says
 * TEXT 600 ms into vagent's next reply; blank lines and `#` comments are skipped.
 */
export function parseCalleeLines(lines: readonly string[]): CalleeStep[] {
  const steps: CalleeStep[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(dtmf|wait|barge)\s*:\s*(.*)$/i.exec(line);
    if (m) {
      const kind = m[1]!.toLowerCase();
      const arg = m[2]!.trim();
      if (kind === 'dtmf') {
        if (!/^[0-9*#A-D]+$/.test(arg)) throw new RangeError(`dtmf: keys must be 0-9, *, #, A-D; got ${JSON.stringify(arg)}`);
        steps.push({ dtmf: arg });
      } else if (kind === 'wait') {
        const ms = Number(arg);
        if (!Number.isInteger(ms) || ms < 0 || ms > 600_000)
          throw new RangeError(`wait: needs milliseconds 0–600000; got ${JSON.stringify(arg)}`);
        steps.push({ wait: ms });
      } else {
        steps.push({ say: arg, bargeInAfterMs: 600 });
      }
      continue;
    }
    if (/^hang\s*up$/i.test(line)) {
      steps.push({ hangup: true });
      continue;
    }
    steps.push({ say: line });
  }
  return steps;
}

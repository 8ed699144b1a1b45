/**
 * One connection accepted by the fake Sarvam server (src/devtools/fake-sarvam.ts): the messages
 * it reads and answers, and when it answers.
 *
 * Speech is found by an energy detector on the received audio: 20 ms frames with an RMS at or
 * above `speechRms` are speech; END_SPEECH comes after `endSilenceMs` of non-speech in *audio*
 * time (500 ms with `high_vad_sensitivity=true`, else 1000 ms — the docs' best practices).
 * Transcripts come from `script`, one per answered segment in order (shared by all connections;
 * an empty transcript once it runs out).
 */
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';

const ENCODINGS = new Set(['audio/wav', 'wav', 'pcm_s16le', 'pcm_l16', 'pcm_raw']);

/** One connection the fake accepted (or refused: then `refused` holds the status). */
export interface FakeSarvamConnection {
  /** The query parameters of the upgrade. */
  query: Record<string, string>;
  /** The upgrade's headers without the key (`api-subscription-key`, `authorization`). */
  headers: Record<string, string>;
  /** The HTTP status the handshake was refused with, if it was. */
  refused?: number;
  /** Audio bytes received (decoded PCM). */
  audioBytes: number;
  /** The decoded PCM16 received, in order. */
  audio: Int16Array[];
  /** Client messages by kind: audio, flush, config, end_of_stream, other. */
  messages: Record<string, number>;
  /** Transcripts sent. */
  transcripts: string[];
  /** Whether the fake dropped it on purpose. */
  dropped: boolean;
}

/** Sarvam's request id: `YYYYMMDD_<uuid>`. */
export function requestId(): string {
  const d = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  return `${d}_${randomUUID()}`;
}

/** How {@link serve} runs a connection: the shared script, the fault to apply, the detector's settings. */
export interface ServeOptions {
  script: string[];
  drop: { afterBytes?: number; afterMs?: number } | undefined;
  speechRms: number;
  endSilenceMs: number | undefined;
  delay: () => number;
}

/** Runs one accepted connection. */
export function serve(ws: WebSocket, conn: FakeSarvamConnection, o: ServeOptions): void {
  const q = conn.query;
  const rate = Number(q.sample_rate ?? '16000');
  const signals = q.vad_signals === 'true';
  const endSilenceMs = o.endSilenceMs ?? (q.high_vad_sensitivity === 'true' ? 500 : 1000);
  const frame = (rate * 20) / 1000;
  const language = q['language-code'] === 'unknown' ? 'hi-IN' : q['language-code']!;
  let pending = new Int16Array(0); // samples not yet in a whole frame
  let speaking = false;
  let voiced = false; // speech heard since the last answer
  let silentMs = 0;
  let segmentSamples = 0;
  let receivedMs = 0;
  let queue = Promise.resolve();
  let ended = false;

  const send = (m: unknown): void => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
  };
  const event = (signal: 'START_SPEECH' | 'END_SPEECH'): void => {
    if (signals) send({ type: 'events', data: { signal_type: signal, occured_at: Date.now() / 1000 } });
  };
  /** Queues the transcript of the current segment (in order, after the answer delay). */
  const answer = (): void => {
    const transcript = voiced ? (o.script.shift() ?? '') : '';
    const audioS = segmentSamples / rate;
    voiced = false;
    segmentSamples = 0;
    const delay = o.delay();
    queue = queue.then(async () => {
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      if (ws.readyState !== ws.OPEN) return;
      conn.transcripts.push(transcript);
      send({
        type: 'data',
        data: {
          request_id: requestId(),
          transcript,
          timestamps: null,
          diarized_transcript: null,
          language_code: language,
          language_probability: null,
          metrics: { audio_duration: audioS, processing_latency: delay / 1000 },
        },
      });
    });
  };
  const onAudio = (pcm: Int16Array): void => {
    const all = new Int16Array(pending.length + pcm.length);
    all.set(pending);
    all.set(pcm, pending.length);
    let at = 0;
    for (; at + frame <= all.length; at += frame) {
      const f = all.subarray(at, at + frame);
      segmentSamples += frame;
      let sum = 0;
      for (const v of f) sum += v * v;
      const loud = Math.sqrt(sum / frame) >= o.speechRms;
      if (loud) {
        silentMs = 0;
        voiced = true;
        if (!speaking) {
          speaking = true;
          event('START_SPEECH');
        }
      } else if (speaking) {
        silentMs += 20;
        if (silentMs >= endSilenceMs) {
          speaking = false;
          silentMs = 0;
          event('END_SPEECH');
          answer();
        }
      }
    }
    pending = all.slice(at);
  };

  ws.on('message', (raw, isBinary) => {
    if (ended) return;
    const count = (k: string): void => void (conn.messages[k] = (conn.messages[k] ?? 0) + 1);
    let m: { type?: unknown; audio?: { data?: unknown; sample_rate?: unknown; encoding?: unknown } };
    try {
      m = isBinary ? {} : (JSON.parse(raw.toString()) as typeof m);
    } catch {
      m = {};
    }
    if (m.type === 'end_of_stream') {
      count('end_of_stream');
      ended = true;
      void queue.then(() => ws.close(1000));
      return;
    }
    if (m.type === 'flush') {
      count('flush');
      speaking = false;
      silentMs = 0;
      answer();
      return;
    }
    if (m.type === 'config') {
      count('config');
      return;
    }
    const a = m.audio;
    if (m.type === undefined && a && typeof a.data === 'string') {
      count('audio');
      if (a.encoding !== undefined && !ENCODINGS.has(String(a.encoding))) {
        send({
          type: 'error',
          data: { error: `unsupported audio encoding ${String(a.encoding)}`, code: 'invalid_request_error' },
        });
        return;
      }
      let bytes = Buffer.from(a.data, 'base64');
      if (bytes.length >= 44 && bytes.toString('latin1', 0, 4) === 'RIFF') bytes = bytes.subarray(44);
      const pcm = new Int16Array(Math.floor(bytes.length / 2));
      for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2);
      conn.audioBytes += pcm.length * 2;
      conn.audio.push(pcm);
      receivedMs += (pcm.length / rate) * 1000;
      if (
        o.drop &&
        ((o.drop.afterBytes !== undefined && conn.audioBytes >= o.drop.afterBytes) ||
          (o.drop.afterMs !== undefined && receivedMs >= o.drop.afterMs))
      ) {
        conn.dropped = true;
        ended = true;
        ws.terminate();
        return;
      }
      onAudio(pcm);
      return;
    }
    count('other');
    send({
      type: 'error',
      data: { error: 'message must carry audio, or be of type flush, config or end_of_stream', code: 'invalid_request_error' },
    });
  });
}

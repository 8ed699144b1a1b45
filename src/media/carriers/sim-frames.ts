/**
 * The carrier's side of the three WebSocket dialects, for the scripted carrier client
 * (../../cli/simulator/sim-client.ts): the frames a carrier SENDS (`connected`, `start`, `media`, `dtmf`, mark
 * acknowledgements, `stop`) built exactly as each carrier documents them, and a caller's line
 * cut into a stream's frames. The frames a carrier RECEIVES from the bot are parsed by
 * ../../cli/simulator/sim-inbound.ts. The daemon-side parsers (./twilio.ts, ./exotel.ts, ./plivo.ts) accept
 * every frame built here; the unit tests check that round trip.
 *
 * Sources (frame shapes, field names, which values are strings):
 * - Twilio: https://www.twilio.com/docs/voice/media-streams/websocket-messages — `connected
 *   {protocol: "Call", version: "1.0.0"}`, `start {sequenceNumber, start {accountSid, streamSid,
 *   callSid, tracks, customParameters, mediaFormat}, streamSid}`, `media {sequenceNumber, media
 *   {track: "inbound", chunk, timestamp, payload}, streamSid}` (numbers as strings), `dtmf {dtmf
 *   {track: "inbound_track", digit}}`, `mark {mark {name}}`, `stop {stop {accountSid, callSid}}`.
 * - Exotel: https://developer.exotel.com/docs/agentstream/websocket-protocol — the same events
 *   in snake case (`sequence_number`, `stream_sid`, `custom_parameters`, `media_format
 *   {encoding, sample_rate, bit_rate}`), numbers as strings, audio "every ~100 ms".
 * - Plivo: https://plivo.com/docs/voice/audio-streaming/audio-streaming — `start
 *   {sequenceNumber, start {callId, streamId, accountId, tracks, mediaFormat}, extra_headers}`,
 *   `media {sequenceNumber, streamId, media {track, timestamp (Unix ms), chunk, payload}}`,
 *   `dtmf`, `playedStream {streamId, name}` (checkpoint reached,
 *   https://plivo.com/docs/voice/xml/the-stream-element/checkpoint-event), `clearedAudio
 *   {sequenceNumber, streamId}` (https://support.plivo.com/hc/en-us/articles/32800291247001).
 *   Plivo sends no `stop`: the socket closes.
 */
import crypto from 'node:crypto';
import { pcmToTelephony } from '../audio.js';
import { toBase64 } from './common.js';
import { MAX_CUSTOM_PARAMETER_CHARS, MAX_CUSTOM_PARAMETERS, type CarrierAudioFormat, type CarrierDialect } from './types.js';

/** The ids a carrier gives one stream (Twilio/Exotel-style `MZ…`/`CA…`/`AC…` sids, Plivo UUIDs). */
export interface SimStreamIds {
  streamId: string;
  callId: string;
  accountId: string;
}

/** Fresh random ids in the dialect's style. */
export function simStreamIds(dialect: CarrierDialect): SimStreamIds {
  if (dialect === 'plivo') {
    return {
      streamId: crypto.randomUUID(),
      callId: crypto.randomUUID(),
      accountId: `MA${crypto.randomBytes(9).toString('hex').toUpperCase()}`,
    };
  }
  const hex = (): string => crypto.randomBytes(16).toString('hex');
  return { streamId: `MZ${hex()}`, callId: `CA${hex()}`, accountId: `AC${hex()}` };
}

/** The format each carrier streams the caller in by default: μ-law 8 kHz (Twilio, Plivo), PCM16 LE 8 kHz (Exotel Voicebot). */
export function defaultSimFormat(dialect: CarrierDialect): CarrierAudioFormat {
  return dialect === 'exotel' ? { encoding: 'pcm16', sampleRate: 8000 } : { encoding: 'mulaw', sampleRate: 8000 };
}

/** How long each inbound caller frame is, ms: 20 (Twilio, Plivo), 100 (Exotel: "every ~100 ms"). */
export function simFrameMs(dialect: CarrierDialect): number {
  return dialect === 'exotel' ? 100 : 20;
}

/**
 * Checks custom parameters before they are sent: at most {@link MAX_CUSTOM_PARAMETERS}, keys
 * 1–256 characters, values at most {@link MAX_CUSTOM_PARAMETER_CHARS}.
 * @throws RangeError naming the offending parameter
 */
export function checkSimParameters(params: Record<string, string>): void {
  const entries = Object.entries(params);
  if (entries.length > MAX_CUSTOM_PARAMETERS)
    throw new RangeError(`at most ${MAX_CUSTOM_PARAMETERS} custom parameters; got ${entries.length}`);
  for (const [k, v] of entries) {
    if (k.length === 0 || k.length > 256)
      throw new RangeError(`custom parameter name must be 1–256 characters: ${JSON.stringify(k.slice(0, 40))}`);
    if (typeof v !== 'string') throw new RangeError(`custom parameter ${k} must be a string`);
    if (v.length > MAX_CUSTOM_PARAMETER_CHARS)
      throw new RangeError(`custom parameter ${k} is ${v.length} characters; at most ${MAX_CUSTOM_PARAMETER_CHARS}`);
  }
}

/**
 * Plivo's `extra_headers` for `params`. Plivo sends the `<Stream extraHeaders="a=1,b=2">`
 * attribute as one string; a value holding `;`, `,` or `=` cannot travel in that form (the
 * daemon splits on `;`/`,`), so then the map is sent as a JSON object, which the daemon-side
 * parser also accepts (e.g. `vagent_fake_transcripts`, a JSON array).
 */
export function plivoExtraHeaders(params: Record<string, string>): string | Record<string, string> {
  const entries = Object.entries(params);
  if (entries.some(([k, v]) => /[;,=]/.test(k) || /[;,=]/.test(v) || k.trim() !== k || v.trim() !== v)) return { ...params };
  return entries.map(([k, v]) => `${k}=${v}`).join(';');
}

/**
 * Builds the frames one carrier stream sends, numbering them as the carrier does
 * (`sequenceNumber`/`sequence_number` from 1; Twilio and Exotel as strings, Plivo as numbers).
 * Media frames are built with template strings: the payload is the only variable part and
 * this runs 50 times a second per simulated call.
 */
export class SimFrameWriter {
  private seq = 0;
  private chunk = 0;

  /**
   * @param epochAtZeroMs Unix ms matching stream time 0 (Plivo media timestamps are epoch ms)
   */
  constructor(
    readonly dialect: CarrierDialect,
    readonly ids: SimStreamIds,
    readonly format: CarrierAudioFormat,
    private readonly epochAtZeroMs = Date.now(),
  ) {}

  private next(): number {
    return ++this.seq;
  }

  /** `connected` (Twilio, Exotel), or null for Plivo, which sends none. */
  connected(): string | null {
    if (this.dialect === 'twilio') return JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    if (this.dialect === 'exotel') return JSON.stringify({ event: 'connected' });
    return null;
  }

  /**
   * `start` carrying `params` (Twilio `customParameters`, Exotel `custom_parameters`, Plivo
   * `extra_headers`) and the caller/called numbers where the dialect has them (Exotel and Plivo
   * `from`/`to`; Twilio has none in `start`, pass them as parameters).
   */
  start(params: Record<string, string>, numbers: { from?: string; to?: string } = {}): string {
    const { streamId, callId, accountId } = this.ids;
    const n = this.next();
    if (this.dialect === 'twilio') {
      return JSON.stringify({
        event: 'start',
        sequenceNumber: String(n),
        start: {
          accountSid: accountId,
          streamSid: streamId,
          callSid: callId,
          tracks: ['inbound'],
          customParameters: params,
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        },
        streamSid: streamId,
      });
    }
    if (this.dialect === 'exotel') {
      return JSON.stringify({
        event: 'start',
        sequence_number: String(n),
        stream_sid: streamId,
        start: {
          stream_sid: streamId,
          call_sid: callId,
          account_sid: accountId,
          ...(numbers.from ? { from: numbers.from } : {}),
          ...(numbers.to ? { to: numbers.to } : {}),
          custom_parameters: params,
          media_format:
            this.format.encoding === 'mulaw'
              ? { encoding: 'audio/x-mulaw', sample_rate: String(this.format.sampleRate) }
              : { encoding: 'audio/x-raw', sample_rate: String(this.format.sampleRate), bit_rate: '16' },
        },
      });
    }
    return JSON.stringify({
      event: 'start',
      sequenceNumber: n,
      start: {
        callId,
        streamId,
        accountId,
        tracks: ['inbound'],
        ...(numbers.from ? { from: numbers.from } : {}),
        ...(numbers.to ? { to: numbers.to } : {}),
        mediaFormat: {
          encoding: this.format.encoding === 'mulaw' ? 'audio/x-mulaw' : 'audio/x-l16',
          sampleRate: this.format.sampleRate,
        },
      },
      extra_headers: plivoExtraHeaders(params),
    });
  }

  /**
   * One caller `media` frame: `b64` is the payload already base64-encoded, `streamMs` the
   * stream time of its first sample (ms since the stream started).
   */
  media(b64: string, streamMs: number): string {
    const n = this.next();
    const c = ++this.chunk;
    const ts = Math.round(streamMs);
    const id = this.ids.streamId;
    if (this.dialect === 'twilio') {
      return `{"event":"media","sequenceNumber":"${n}","media":{"track":"inbound","chunk":"${c}","timestamp":"${ts}","payload":"${b64}"},"streamSid":"${id}"}`;
    }
    if (this.dialect === 'exotel') {
      return `{"event":"media","sequence_number":"${n}","stream_sid":"${id}","media":{"chunk":"${c}","timestamp":"${ts}","payload":"${b64}"}}`;
    }
    return `{"event":"media","sequenceNumber":${n},"streamId":"${id}","media":{"track":"inbound","timestamp":"${this.epochAtZeroMs + ts}","chunk":${c},"payload":"${b64}"}}`;
  }

  /** One DTMF key (`0-9`, `*`, `#`, `A-D`) pressed at stream time `streamMs`. */
  dtmf(digit: string, streamMs: number): string {
    const n = this.next();
    const id = this.ids.streamId;
    if (this.dialect === 'twilio')
      return JSON.stringify({ event: 'dtmf', streamSid: id, sequenceNumber: String(n), dtmf: { track: 'inbound_track', digit } });
    if (this.dialect === 'exotel')
      return JSON.stringify({ event: 'dtmf', sequence_number: String(n), stream_sid: id, dtmf: { digit, duration: '100' } });
    return JSON.stringify({
      event: 'dtmf',
      sequenceNumber: n,
      streamId: id,
      dtmf: { digit, track: 'inbound', timestamp: String(this.epochAtZeroMs + Math.round(streamMs)) },
    });
  }

  /** The acknowledgement of mark/checkpoint `name`: Twilio/Exotel `mark`, Plivo `playedStream`. */
  markAck(name: string): string {
    const n = this.next();
    const id = this.ids.streamId;
    if (this.dialect === 'twilio') return JSON.stringify({ event: 'mark', sequenceNumber: String(n), streamSid: id, mark: { name } });
    if (this.dialect === 'exotel') return JSON.stringify({ event: 'mark', sequence_number: String(n), stream_sid: id, mark: { name } });
    return JSON.stringify({ event: 'playedStream', sequenceNumber: n, streamId: id, name });
  }

  /** Plivo's `clearedAudio` confirmation, or null for the dialects that send none. */
  cleared(): string | null {
    if (this.dialect !== 'plivo') return null;
    return JSON.stringify({ event: 'clearedAudio', sequenceNumber: this.next(), streamId: this.ids.streamId });
  }

  /** `stop` (Twilio, Exotel), or null for Plivo, which just closes the socket. */
  stop(reason = 'callended'): string | null {
    const n = this.next();
    const { streamId, callId, accountId } = this.ids;
    if (this.dialect === 'twilio')
      return JSON.stringify({
        event: 'stop',
        sequenceNumber: String(n),
        streamSid: streamId,
        stop: { accountSid: accountId, callSid: callId },
      });
    if (this.dialect === 'exotel')
      return JSON.stringify({
        event: 'stop',
        sequence_number: String(n),
        stream_sid: streamId,
        stop: { call_sid: callId, account_sid: accountId, reason },
      });
    return null;
  }
}

/** A caller line cut into one stream format's frames, base64 payloads ready to send (plain data; share it between calls). */
export interface SimPreparedLine {
  dialect: CarrierDialect;
  format: CarrierAudioFormat;
  /** Base64 payload of each frame, in order. */
  frames: readonly string[];
  /** Length of the speech (silence trimmed), ms. */
  speechMs: number;
}

/**
 * Cuts a caller line into the frames of `dialect` in `format` (default: the dialect's default):
 * leading and trailing silence (|sample| ≤ `threshold`) trimmed, resampled and encoded with
 * ../audio.ts `pcmToTelephony`, 20 ms frames (Exotel 100 ms), the last padded with silence.
 * @param pcm mono PCM16 at `sampleRate` Hz (one of ../audio.ts SAMPLE_RATES)
 * @throws RangeError for an empty line or an unsupported rate or format
 */
export function prepareSimLine(
  pcm: Int16Array,
  sampleRate: number,
  dialect: CarrierDialect,
  format: CarrierAudioFormat = defaultSimFormat(dialect),
  threshold = 500,
): SimPreparedLine {
  if (!(pcm instanceof Int16Array) || pcm.length === 0) throw new RangeError('a caller line must be non-empty 16-bit samples');
  const span = speechSpan(pcm, threshold);
  const speech = span ? pcm.subarray(span[0], span[1]) : pcm;
  const frames = pcmToTelephony(
    speech,
    sampleRate,
    { encoding: format.encoding, sampleRate: format.sampleRate },
    { frameMs: simFrameMs(dialect) },
  );
  return {
    dialect,
    format: { ...format },
    frames: frames.map((f) => toBase64(f.payload)),
    speechMs: Math.round((speech.length / sampleRate) * 1000),
  };
}

/** Index of the first and one past the last sample louder than `threshold`, or null for silence. */
function speechSpan(pcm: Int16Array, threshold: number): [number, number] | null {
  let a = 0;
  while (a < pcm.length && Math.abs(pcm[a]!) <= threshold) a++;
  if (a === pcm.length) return null;
  let b = pcm.length;
  while (b > a && Math.abs(pcm[b - 1]!) <= threshold) b--;
  return [a, b];
}

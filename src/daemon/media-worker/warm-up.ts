/**
 * What a media worker does before its first call (docs/media.md, "The first call after
 * start"): the formats it converts the agents' openings into, and the silent carrier streams
 * it runs once through the whole media path (frame parsing, decoding, resampling, the VAD, the
 * media session, paced playout), so that the first caller does not pay for code loading and
 * compilation that every later caller finds done.
 */
import { SimFrameWriter, simFrameMs, simStreamIds } from '../../media/carriers/sim-frames.js';
import type { CarrierAudioFormat, CarrierDialect } from '../../media/carriers/types.js';
import type { StreamSettings } from '../../media/worker-protocol.js';

/** An outbound audio format a worker plays clips in. */
export interface WarmFormat {
  encoding: 'mulaw' | 'pcm16le';
  sampleRate: number;
}

/**
 * The carrier streams a warm-up runs, one each: every dialect in its default format (Twilio
 * and Plivo μ-law 8 kHz, Exotel 16-bit PCM 8 kHz) and the 16 kHz linear PCM that Exotel and
 * Plivo offer (the default of `vagent call simulate` there).
 */
export const WARM_STREAMS: ReadonlyArray<{ dialect: CarrierDialect; format: CarrierAudioFormat }> = [
  { dialect: 'twilio', format: { encoding: 'mulaw', sampleRate: 8000 } },
  { dialect: 'plivo', format: { encoding: 'mulaw', sampleRate: 8000 } },
  { dialect: 'exotel', format: { encoding: 'pcm16', sampleRate: 8000 } },
  { dialect: 'exotel', format: { encoding: 'pcm16', sampleRate: 16000 } },
  { dialect: 'plivo', format: { encoding: 'pcm16', sampleRate: 16000 } },
];

/** The outbound formats of carrier streams a worker converts openings into (those of {@link WARM_STREAMS}). */
export const CARRIER_WARM_FORMATS: readonly WarmFormat[] = [
  { encoding: 'mulaw', sampleRate: 8000 },
  { encoding: 'pcm16le', sampleRate: 8000 },
  { encoding: 'pcm16le', sampleRate: 16000 },
];

/** The outbound format of a LiveKit room (src/adapters/livekit/livekit-transport.ts `LIVEKIT_OUTBOUND`: 48 kHz PCM16). */
export const ROOM_WARM_FORMATS: readonly WarmFormat[] = [{ encoding: 'pcm16le', sampleRate: 48_000 }];

/** Caller audio of a warm-up stream: silence, ms. */
const WARM_AUDIO_MS = 400;

/**
 * The frames a carrier sends at the start of a silent warm-up stream in `format`: `connected`
 * (where the dialect has one), `start` with no custom parameters, and
 * {@link WARM_AUDIO_MS} of silent caller audio in the dialect's frames.
 */
export function warmStreamFrames(dialect: CarrierDialect, format: CarrierAudioFormat): string[] {
  const writer = new SimFrameWriter(dialect, simStreamIds(dialect), format);
  const frameMs = simFrameMs(dialect);
  const bytes = (format.sampleRate / 1000) * frameMs * (format.encoding === 'mulaw' ? 1 : 2);
  // μ-law silence is 0xFF; linear PCM silence is zeros.
  const payload = Buffer.alloc(bytes, format.encoding === 'mulaw' ? 0xff : 0).toString('base64');
  const frames = [writer.connected(), writer.start({})].filter((f): f is string => f !== null);
  for (let ms = 0; ms < WARM_AUDIO_MS; ms += frameMs) frames.push(writer.media(payload, ms));
  return frames;
}

/** The media settings of a warm-up stream: a short, quiet call nobody hears. */
export const WARM_STREAM_SETTINGS: StreamSettings = {
  language: 'en-IN',
  bargeIn: true,
  noSpeechMs: 60_000,
  maxReprompts: 0,
  maxCallDurationMs: 60_000,
  eouSilence: {},
  closeGraceMs: 0,
  recognizerTimeoutMs: 1000,
};

/** How long a warm-up stream plays before it is hung up, ms: long enough for its first paced frames. */
export const WARM_STREAM_MS = 120;

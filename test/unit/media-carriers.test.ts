/**
 * Carrier stream protocols (src/media/carriers): the carriers' documented sample frames parse to
 * the right normalised events, the builders produce the documented outbound frames, bad and
 * out-of-order frames give typed errors, and the upgrade signatures check out against vectors
 * computed here with node:crypto from the documented algorithms.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CarrierProtocolError,
  CarrierStream,
  MAX_FRAME_CHARS,
  MAX_MEDIA_PAYLOAD_BYTES,
  exotelChunkRules,
  exotelChunks,
  exotelWriter,
  parseBasicAuth,
  parseExotel,
  parsePlivo,
  parseTwilio,
  plivoWriter,
  twilioWriter,
  validateExotelBasicAuth,
  validatePlivoSignatureV3,
  validateTwilioSignature,
  type CarrierErrorCode,
  type CarrierEvent,
} from '../../src/media/carriers/index.js';

const j = (v: unknown) => JSON.stringify(v);

/** The error `fn` throws, asserted to be a CarrierProtocolError. */
function caught(fn: () => unknown): CarrierProtocolError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CarrierProtocolError);
    return err as CarrierProtocolError;
  }
  throw new Error('expected a CarrierProtocolError, nothing was thrown');
}

function expectCode(fn: () => unknown, code: CarrierErrorCode, field?: string): CarrierProtocolError {
  const err = caught(fn);
  expect(err.code).toBe(code);
  if (field !== undefined) expect(err.field).toBe(field);
  return err;
}

// μ-law bytes (160 = 20 ms at 8 kHz) and PCM16 LE bytes (3200 = 100 ms at 8 kHz).
const MULAW = Buffer.from(Array.from({ length: 160 }, (_, i) => (i * 7) & 0xff));
const PCM = Buffer.alloc(3200);
for (let i = 0; i < 1600; i++) PCM.writeInt16LE(Math.round(Math.sin(i / 5) * 8000), i * 2);

// ------------------------------------------------------------------------------------------
// Twilio — https://www.twilio.com/docs/voice/media-streams/websocket-messages

const TW_SID = 'MZ18ad3ab5a668481ce02b83e7395059f0';
const twStart = {
  event: 'start',
  sequenceNumber: '1',
  start: {
    accountSid: 'AC123',
    streamSid: TW_SID,
    callSid: 'CA123',
    tracks: ['inbound', 'outbound'],
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    customParameters: { FirstName: 'Jane', LastName: 'Doe', RemoteParty: 'Bob' },
  },
  streamSid: TW_SID,
};
const twMedia = (payload = MULAW.toString('base64'), track = 'inbound') => ({
  event: 'media',
  sequenceNumber: '3',
  media: { track, chunk: '1', timestamp: '5', payload },
  streamSid: TW_SID,
});

describe('Twilio Media Streams', () => {
  it("parses the docs' inbound messages", () => {
    expect(parseTwilio(j({ event: 'connected', protocol: 'Call', version: '1.0.0' }))).toEqual({ type: 'connected' });
    expect(parseTwilio(j(twStart))).toEqual({
      type: 'start',
      streamId: TW_SID,
      callId: 'CA123',
      accountId: 'AC123',
      customParameters: { FirstName: 'Jane', LastName: 'Doe', RemoteParty: 'Bob' },
      format: { encoding: 'mulaw', sampleRate: 8000 },
    });
    const media = parseTwilio(j(twMedia())) as Extract<CarrierEvent, { type: 'media' }>;
    expect(media.type).toBe('media');
    expect(media.payload.equals(MULAW)).toBe(true);
    expect([media.timestampMs, media.seq, media.streamId]).toEqual([5, 1, TW_SID]);
    expect(parseTwilio(j({ event: 'dtmf', streamSid: TW_SID, sequenceNumber: '5', dtmf: { track: 'inbound_track', digit: '1' } }))).toEqual(
      {
        type: 'dtmf',
        streamId: TW_SID,
        digit: '1',
      },
    );
    expect(parseTwilio(j({ event: 'mark', sequenceNumber: '4', streamSid: TW_SID, mark: { name: 'my label' } }))).toEqual({
      type: 'markAck',
      streamId: TW_SID,
      name: 'my label',
    });
    expect(
      parseTwilio(j({ event: 'stop', sequenceNumber: '5', stop: { accountSid: 'AC123', callSid: 'CA123' }, streamSid: TW_SID })),
    ).toEqual({
      type: 'stop',
      streamId: TW_SID,
    });
  });

  it('ignores unknown events and media of the outbound track', () => {
    expect(parseTwilio(j({ event: 'futureThing', x: 1 }))).toEqual({ type: 'ignored', event: 'futureThing' });
    expect(parseTwilio(j(twMedia(undefined, 'outbound')))).toEqual({ type: 'ignored', event: 'media:outbound' });
  });

  it("builds the docs' outbound media, mark and clear frames exactly", () => {
    const w = twilioWriter(TW_SID);
    expect(w.media(MULAW)).toBe(`{"event":"media","streamSid":"${TW_SID}","media":{"payload":"${MULAW.toString('base64')}"}}`);
    expect(w.mark('my label')).toBe(`{"event":"mark","streamSid":"${TW_SID}","mark":{"name":"my label"}}`);
    expect(w.clear()).toBe(`{"event":"clear","streamSid":"${TW_SID}"}`);
    expectCode(() => w.media(new Uint8Array(0)), 'invalid_outbound');
    expectCode(() => w.mark(''), 'invalid_outbound');
  });

  it('refuses a start with a wrong media format or a missing callSid, naming the field', () => {
    const wrongRate = {
      ...twStart,
      start: { ...twStart.start, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 16000, channels: 1 } },
    };
    const err = expectCode(() => parseTwilio(j(wrongRate)), 'invalid_message', 'start.mediaFormat.sampleRate');
    expect(err.message).toMatch(/^twilio: start frame: start\.mediaFormat\.sampleRate/);
    expect(err.toData()).toMatchObject({ code: 'invalid_message', dialect: 'twilio', field: 'start.mediaFormat.sampleRate' });
    const { callSid: _drop, ...noCall } = twStart.start;
    const missing = expectCode(() => parseTwilio(j({ ...twStart, start: noCall })), 'invalid_message', 'start.callSid');
    expect(missing.message).toContain('start.callSid: missing');
  });
});

// ------------------------------------------------------------------------------------------
// Exotel — https://developer.exotel.com/docs/agentstream/websocket-protocol

const EX_SID = 'MZxxxxxxxxxxxxxxxxxxxxxxxx';
const exStart = (media_format: Record<string, string> = { encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '16' }) => ({
  event: 'start',
  sequence_number: '1',
  stream_sid: EX_SID,
  start: {
    stream_sid: EX_SID,
    call_sid: 'CAxxxxxxxxxxxxxxxxxxxxxxxx',
    account_sid: 'ACxxxxxxxxxxxxxxxxxxxxxxxx',
    from: '+919876543210',
    to: '+918047491899',
    custom_parameters: { key1: 'value1' },
    media_format,
  },
});
const exMedia = (payload = PCM.toString('base64')) => ({
  event: 'media',
  sequence_number: '3',
  stream_sid: EX_SID,
  media: { chunk: '2', timestamp: '200', payload },
});

describe('Exotel AgentStream', () => {
  it("parses the docs' inbound messages", () => {
    expect(parseExotel(j({ event: 'connected' }))).toEqual({ type: 'connected' });
    expect(parseExotel(j(exStart()))).toEqual({
      type: 'start',
      streamId: EX_SID,
      callId: 'CAxxxxxxxxxxxxxxxxxxxxxxxx',
      accountId: 'ACxxxxxxxxxxxxxxxxxxxxxxxx',
      from: '+919876543210',
      to: '+918047491899',
      customParameters: { key1: 'value1' },
      format: { encoding: 'pcm16', sampleRate: 8000 },
    });
    const media = parseExotel(j(exMedia())) as Extract<CarrierEvent, { type: 'media' }>;
    expect(media.payload.equals(PCM)).toBe(true);
    expect([media.timestampMs, media.seq]).toEqual([200, 2]);
    expect(parseExotel(j({ event: 'dtmf', sequence_number: '7', stream_sid: EX_SID, dtmf: { digit: '5', duration: '100' } }))).toEqual({
      type: 'dtmf',
      streamId: EX_SID,
      digit: '5',
    });
    expect(parseExotel(j({ event: 'mark', sequence_number: '15', stream_sid: EX_SID, mark: { name: 'greeting-done' } }))).toEqual({
      type: 'markAck',
      streamId: EX_SID,
      name: 'greeting-done',
    });
    expect(parseExotel(j({ event: 'clear', stream_sid: EX_SID }))).toEqual({ type: 'cleared', streamId: EX_SID });
    expect(
      parseExotel(
        j({
          event: 'stop',
          sequence_number: '20',
          stream_sid: EX_SID,
          stop: { call_sid: 'CA', account_sid: 'AC', reason: 'callended' },
        }),
      ),
    ).toEqual({
      type: 'stop',
      streamId: EX_SID,
      reason: 'callended',
    });
  });

  it('lets start.media_format decide the encoding and rate', () => {
    const fmt = (mf: Record<string, string>) => (parseExotel(j(exStart(mf))) as Extract<CarrierEvent, { type: 'start' }>).format;
    expect(fmt({ encoding: 'audio/x-raw', sample_rate: '16000', bit_rate: '16' })).toEqual({
      encoding: 'pcm16',
      sampleRate: 16000,
    });
    expect(fmt({ encoding: 'audio/x-mulaw', sample_rate: '8000' })).toEqual({ encoding: 'mulaw', sampleRate: 8000 });
    expectCode(() => fmt({ encoding: 'audio/ogg', sample_rate: '8000' }), 'invalid_message', 'start.media_format.encoding');
    expectCode(() => fmt({ encoding: 'audio/x-raw', sample_rate: '11025' }), 'invalid_message', 'start.media_format.sample_rate');
    expectCode(() => fmt({ encoding: 'audio/x-raw', sample_rate: 'fast' }), 'invalid_message', 'start.media_format.sample_rate');
    expectCode(
      () => fmt({ encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '8' }),
      'invalid_message',
      'start.media_format.bit_rate',
    );
  });

  it('builds media only in chunks Exotel accepts: multiples of 320 bytes, ≥ 100 ms, ≤ 100 KB', () => {
    const f8 = { encoding: 'pcm16', sampleRate: 8000 } as const;
    expect(exotelChunkRules(f8)).toEqual({ multipleBytes: 320, minBytes: 3200, maxBytes: 99840 });
    expect(exotelChunkRules({ encoding: 'pcm16', sampleRate: 16000 }).minBytes).toBe(3200);
    expect(exotelChunkRules({ encoding: 'pcm16', sampleRate: 24000 }).minBytes).toBe(4800);
    expect(exotelChunkRules({ encoding: 'mulaw', sampleRate: 8000 }).minBytes).toBe(960);
    const w = exotelWriter(EX_SID, f8);
    expect(w.media(PCM)).toBe(`{"event":"media","stream_sid":"${EX_SID}","media":{"payload":"${PCM.toString('base64')}"}}`);
    expect(w.mark('m1')).toBe(`{"event":"mark","stream_sid":"${EX_SID}","mark":{"name":"m1"}}`);
    expect(w.clear()).toBe(`{"event":"clear","stream_sid":"${EX_SID}"}`);
    expectCode(() => w.media(PCM.subarray(0, 3200 - 320)), 'invalid_outbound', 'media.payload'); // under 3.2 KB
    expectCode(() => w.media(Buffer.alloc(3200 + 2)), 'invalid_outbound', 'media.payload'); // not a multiple of 320
    expectCode(() => w.media(Buffer.alloc(320 * 313)), 'invalid_outbound', 'media.payload'); // 100 160 B > 100 KB
  });

  it('splits audio into compliant chunks, padding the tail with silence', () => {
    const f8 = { encoding: 'pcm16', sampleRate: 8000 } as const;
    const audio = Buffer.alloc(3200 * 2 + 100, 7);
    const chunks = exotelChunks(audio, f8);
    expect(chunks.map((c) => c.length)).toEqual([3200, 3200, 3200]);
    expect(chunks[2]!.subarray(0, 100).every((b) => b === 7)).toBe(true);
    expect(chunks[2]!.subarray(100).every((b) => b === 0)).toBe(true);
    const mu = exotelChunks(Buffer.alloc(10, 1), { encoding: 'mulaw', sampleRate: 8000 });
    expect(mu.map((c) => c.length)).toEqual([960]);
    expect(mu[0]![10]).toBe(0xff);
    expect(exotelChunks(Buffer.alloc(0), f8)).toEqual([]);
    expectCode(() => exotelChunks(audio, f8, 1000), 'invalid_outbound');
    const w = exotelWriter(EX_SID, f8);
    for (const c of exotelChunks(Buffer.alloc(12345, 3), f8, 6400)) expect(() => w.media(c)).not.toThrow();
  });
});

// ------------------------------------------------------------------------------------------
// Plivo — https://www.plivo.com/docs/voice-agents/audio-streaming/concepts/audio-streaming-reference

const PL_SID = '87654321-4321-4321-4321-cba987654321';
const plStart = (mediaFormat: Record<string, unknown> = { encoding: 'audio/x-mulaw', sampleRate: 8000 }) => ({
  event: 'start',
  sequenceNumber: 1,
  start: {
    callId: '12345678-1234-1234-1234-123456789abc',
    streamId: PL_SID,
    accountId: 'MAXXXXXXXXXXXXXXXXXX',
    tracks: ['inbound'],
    mediaFormat,
  },
  extra_headers: 'userId=12345;sessionId=abc-xyz',
});
const plMedia = (payload = MULAW.toString('base64')) => ({
  event: 'media',
  sequenceNumber: 42,
  streamId: PL_SID,
  media: { track: 'inbound', timestamp: '1705312200000', chunk: 41, payload },
  extra_headers: 'userId=12345;sessionId=abc-xyz',
});

describe('Plivo Audio Streams', () => {
  it("parses the docs' inbound messages", () => {
    expect(parsePlivo(j(plStart()))).toEqual({
      type: 'start',
      streamId: PL_SID,
      callId: '12345678-1234-1234-1234-123456789abc',
      accountId: 'MAXXXXXXXXXXXXXXXXXX',
      customParameters: { userId: '12345', sessionId: 'abc-xyz' },
      format: { encoding: 'mulaw', sampleRate: 8000 },
    });
    const media = parsePlivo(j(plMedia())) as Extract<CarrierEvent, { type: 'media' }>;
    expect(media.payload.equals(MULAW)).toBe(true);
    expect([media.timestampMs, media.seq, media.streamId]).toEqual([1705312200000, 41, PL_SID]);
    expect(parsePlivo(j({ event: 'dtmf', sequenceNumber: 50, streamId: PL_SID, dtmf: { digit: '#' } }))).toEqual({
      type: 'dtmf',
      streamId: PL_SID,
      digit: '#',
    });
    expect(
      parsePlivo(j({ event: 'playedStream', streamId: '20170ada-f610-433b-8758-c02a2aab3662', name: 'customer greeting audio' })),
    ).toEqual({
      type: 'markAck',
      streamId: '20170ada-f610-433b-8758-c02a2aab3662',
      name: 'customer greeting audio',
    });
    expect(parsePlivo(j({ event: 'clearedAudio', sequenceNumber: 60, streamId: PL_SID }))).toEqual({
      type: 'cleared',
      streamId: PL_SID,
    });
    expect(parsePlivo(j({ event: 'somethingNew' }))).toEqual({ type: 'ignored', event: 'somethingNew' });
  });

  it('reads extraHeaders in both documented separators and L16 16 kHz', () => {
    const s = parsePlivo(j({ ...plStart({ encoding: 'audio/x-l16', sampleRate: 16000 }), extra_headers: 'test1=12,test2=123' })) as Extract<
      CarrierEvent,
      { type: 'start' }
    >;
    expect(s.customParameters).toEqual({ test1: '12', test2: '123' });
    expect(s.format).toEqual({ encoding: 'pcm16', sampleRate: 16000 });
    expectCode(
      () => parsePlivo(j(plStart({ encoding: 'audio/x-mulaw', sampleRate: 16000 }))),
      'invalid_message',
      'start.mediaFormat.sampleRate',
    );
    expectCode(() => parsePlivo(j(plStart({ encoding: 'audio/opus', sampleRate: 8000 }))), 'invalid_message', 'start.mediaFormat.encoding');
  });

  it("builds the docs' playAudio, checkpoint and clearAudio frames", () => {
    const w = plivoWriter('20170ada-f610-433b-8758-c02a2aab3662', { encoding: 'mulaw', sampleRate: 8000 });
    expect(JSON.parse(w.media(MULAW))).toEqual({
      event: 'playAudio',
      media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: MULAW.toString('base64') },
    });
    expect(w.mark('customer greeting audio')).toBe(
      '{"event":"checkpoint","streamId":"20170ada-f610-433b-8758-c02a2aab3662","name":"customer greeting audio"}',
    );
    expect(w.clear()).toBe('{"event":"clearAudio","streamId":"20170ada-f610-433b-8758-c02a2aab3662"}');
    const l16 = plivoWriter(PL_SID, { encoding: 'pcm16', sampleRate: 16000 });
    expect(JSON.parse(l16.media(PCM)).media).toMatchObject({ contentType: 'audio/x-l16', sampleRate: 16000 });
    expectCode(() => l16.media(Buffer.alloc(3)), 'invalid_outbound'); // half a sample
  });
});

// ------------------------------------------------------------------------------------------
// Bad frames, for every dialect

describe('malformed, mistyped and oversized frames', () => {
  const parsers = { twilio: parseTwilio, exotel: parseExotel, plivo: parsePlivo };

  it.each(Object.entries(parsers))('%s: not JSON, not an object, no event → typed errors', (dialect, parse) => {
    const e = expectCode(() => parse('{"event": "media", '), 'malformed_json');
    expect(e.dialect).toBe(dialect);
    expect(e.message.startsWith(`${dialect}: `)).toBe(true);
    expectCode(() => parse('[1,2]'), 'malformed_json');
    expectCode(() => parse('null'), 'malformed_json');
    expectCode(() => parse('{"type":"media"}'), 'invalid_message', 'event');
    expectCode(() => parse('{"event":42}'), 'invalid_message', 'event');
  });

  it('takes frames as UTF-8 bytes too, refusing invalid UTF-8 and oversized byte frames', () => {
    expect(parseTwilio(Buffer.from(j({ event: 'connected', protocol: 'Call', version: '1.0.0' })))).toEqual({
      type: 'connected',
    });
    const s = new CarrierStream('exotel');
    s.receive(new TextEncoder().encode(j(exStart())));
    expect(s.receive(Buffer.from(j(exMedia()))).type).toBe('media');
    expectCode(() => parseExotel(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 'malformed_json');
    expectCode(() => parsePlivo(Buffer.alloc(MAX_FRAME_CHARS + 1, 0x20)), 'oversized');
    expectCode(() => parsePlivo(42 as unknown as string), 'malformed_json');
  });

  it('missing and mistyped media fields name the field', () => {
    expectCode(
      () => parseTwilio(j({ event: 'media', streamSid: TW_SID, media: { track: 'inbound' } })),
      'invalid_message',
      'media.payload',
    );
    expectCode(() => parseExotel(j({ event: 'media', stream_sid: EX_SID, media: { payload: 12 } })), 'invalid_message', 'media.payload');
    expectCode(() => parsePlivo(j({ event: 'media', streamId: PL_SID })), 'invalid_message', 'media');
    expectCode(() => parseTwilio(j({ ...twMedia(), media: { ...twMedia().media, chunk: 'one' } })), 'invalid_message', 'media.chunk');
    expectCode(() => parseTwilio(j({ event: 'dtmf', streamSid: TW_SID, dtmf: { digit: '12' } })), 'invalid_message', 'dtmf.digit');
    expectCode(() => parsePlivo(j({ event: 'dtmf', streamId: PL_SID })), 'invalid_message', 'dtmf.digit');
    expectCode(() => parseExotel(j({ event: 'mark', stream_sid: EX_SID, mark: {} })), 'invalid_message', 'mark.name');
    expectCode(
      () => parseExotel(j({ ...exStart(), start: { ...exStart().start, custom_parameters: 'x=1' } })),
      'invalid_message',
      'start.custom_parameters',
    );
  });

  it('refuses a payload that is not base64', () => {
    expectCode(() => parseTwilio(j(twMedia('not base64!!'))), 'bad_payload', 'media.payload');
    expectCode(() => parseExotel(j(exMedia('QUJD\nREVG'))), 'bad_payload', 'media.payload');
    expectCode(() => parsePlivo(j(plMedia('QUJDRA='))), 'bad_payload', 'media.payload'); // length not a multiple of 4
  });

  it('refuses oversized frames and payloads before decoding them', () => {
    const big = Buffer.alloc(MAX_MEDIA_PAYLOAD_BYTES + 320).toString('base64');
    expectCode(() => parseTwilio(j(twMedia(big))), 'oversized', 'media.payload');
    expectCode(() => parseExotel(j(exMedia(big))), 'oversized', 'media.payload');
    expectCode(() => parsePlivo(j(plMedia(big))), 'oversized', 'media.payload');
    const justFits = Buffer.alloc(MAX_MEDIA_PAYLOAD_BYTES).toString('base64');
    expect(parseTwilio(j(twMedia(justFits))).type).toBe('media');
    const huge = j({ event: 'media', pad: 'x'.repeat(MAX_FRAME_CHARS) });
    expectCode(() => parsePlivo(huge), 'oversized');
  });
});

// ------------------------------------------------------------------------------------------
// Order rules

describe('CarrierStream order rules', () => {
  it('admits connected → start → media/dtmf/mark → stop, and counts', () => {
    const s = new CarrierStream('twilio');
    expect(s.phase).toBe('awaiting_start');
    expectCode(() => s.writer, 'out_of_order');
    s.receive(j({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    expect(s.receive(j(twStart)).type).toBe('start');
    expect(s.phase).toBe('started');
    expect(s.format).toEqual({ encoding: 'mulaw', sampleRate: 8000 });
    expect(s.writer.clear()).toBe(`{"event":"clear","streamSid":"${TW_SID}"}`);
    expect(s.receive(j(twMedia())).type).toBe('media');
    expect(s.receive(j({ event: 'dtmf', streamSid: TW_SID, dtmf: { digit: '#' } }))).toEqual({
      type: 'dtmf',
      streamId: TW_SID,
      digit: '#',
    });
    expect(s.receive(j({ event: 'whatever' })).type).toBe('ignored');
    expect(s.receive(j({ event: 'stop', streamSid: TW_SID })).type).toBe('stop');
    expect(s.phase).toBe('stopped');
    expect(s.stats).toEqual({ frames: 6, mediaFrames: 1, mediaBytes: 160, ignored: 1 });
  });

  it('refuses media, dtmf and marks before start', () => {
    const s = new CarrierStream('exotel');
    s.receive(j({ event: 'connected' }));
    const e = expectCode(() => s.receive(j(exMedia())), 'out_of_order');
    expect(e.message).toBe('exotel: "media" before start');
    expectCode(() => s.receive(j({ event: 'dtmf', stream_sid: EX_SID, dtmf: { digit: '1' } })), 'out_of_order');
    expectCode(() => s.receive(j({ event: 'mark', stream_sid: EX_SID, mark: { name: 'x' } })), 'out_of_order');
    expect(s.stats.frames).toBe(1);
    // The stream is still usable once the start comes.
    s.receive(j(exStart()));
    expect(s.receive(j(exMedia())).type).toBe('media');
  });

  it('refuses a second start and anything after stop', () => {
    const s = new CarrierStream('plivo');
    s.receive(j(plStart()));
    const dup = expectCode(() => s.receive(j(plStart())), 'out_of_order');
    expect(dup.message).toContain('second "start"');
    expect(s.start!.streamId).toBe(PL_SID);
    s.receive(j({ event: 'stop', streamId: PL_SID }));
    expectCode(() => s.receive(j(plMedia())), 'out_of_order');
    expect(caught(() => s.receive(j(plMedia()))).message).toBe('plivo: "media" after stop');
    expectCode(() => s.receive('garbage after stop'), 'out_of_order');
    expectCode(() => s.receive(j(plStart())), 'out_of_order');
    expectCode(() => s.accept({ type: 'connected' }), 'out_of_order');
  });

  it('refuses frames naming another stream, and media that is not whole samples', () => {
    const s = new CarrierStream('exotel');
    s.receive(j(exStart()));
    expectCode(() => s.receive(j({ ...exMedia(), stream_sid: 'MZother' })), 'stream_mismatch', 'streamId');
    expectCode(() => s.receive(j(exMedia(Buffer.alloc(321).toString('base64')))), 'bad_payload', 'media.payload');
    expect(s.stats.mediaFrames).toBe(0);
  });

  it('a stop before any start ends the stream too', () => {
    const s = new CarrierStream('twilio');
    s.receive(j({ event: 'stop' }));
    expect(s.phase).toBe('stopped');
    expectCode(() => s.receive(j(twStart)), 'out_of_order');
  });
});

// ------------------------------------------------------------------------------------------
// Upgrade authentication

describe('Twilio request signature', () => {
  // The worked example of https://www.twilio.com/docs/usage/webhooks/webhooks-security, also
  // in twilio-node's and twilio-php's RequestValidator tests.
  const token = '12345';
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params = {
    CallSid: 'CA1234567890ABCDE',
    Caller: '+14158675309',
    Digits: '1234',
    From: '+14158675309',
    To: '+18005551212',
  };

  it("accepts the docs' worked example and a vector computed from the documented algorithm", () => {
    expect(validateTwilioSignature({ authToken: token, signature: 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', url, params })).toBe(true);
    // Names are sorted whatever order they arrive in.
    const shuffled = { To: params.To, Digits: params.Digits, From: params.From, CallSid: params.CallSid, Caller: params.Caller };
    expect(validateTwilioSignature({ authToken: token, signature: 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', url, params: shuffled })).toBe(true);
    // A repeated name: values sorted and de-duplicated (twilio-php / twilio-python SDK test vector).
    const repeated = { Sid: 'CA123', SidAccount: 'AC123', Digits: ['5678', '1234', '1234'] };
    expect(validateTwilioSignature({ authToken: token, signature: 'IK+Dwps556ElfBT0I3Rgjkr1wJU=', url, params: repeated })).toBe(true);
    // The upgrade is a GET: the signed data is the wss URL alone.
    const wss = 'wss://vagent.example.com/v1/media/twilio?tenant=acme';
    const sig = createHmac('sha1', 'tok-abc').update(wss).digest('base64');
    expect(validateTwilioSignature({ authToken: 'tok-abc', signature: sig, url: wss })).toBe(true);
    // Twilio may sign with the default port written out; either form is accepted.
    const sigPort = createHmac('sha1', 'tok-abc').update('wss://vagent.example.com:443/v1/media/twilio?tenant=acme').digest('base64');
    expect(validateTwilioSignature({ authToken: 'tok-abc', signature: sigPort, url: wss })).toBe(true);
  });

  it('rejects a tampered URL, parameter, token or signature, and hostile input without throwing', () => {
    const good = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';
    expect(validateTwilioSignature({ authToken: token, signature: good, url: url + '&x=1', params })).toBe(false);
    expect(validateTwilioSignature({ authToken: token, signature: good, url, params: { ...params, Digits: '9999' } })).toBe(false);
    expect(validateTwilioSignature({ authToken: '12346', signature: good, url, params })).toBe(false);
    expect(validateTwilioSignature({ authToken: token, signature: good.replace('R', 'S'), url, params })).toBe(false);
    for (const signature of [undefined, '', 'x'.repeat(100_000), '\u0000\uffff']) {
      expect(validateTwilioSignature({ authToken: token, signature, url, params })).toBe(false);
    }
    expect(validateTwilioSignature({ authToken: token, signature: good, url: 'not a url', params })).toBe(false);
    expect(validateTwilioSignature({ authToken: '', signature: good, url, params })).toBe(false);
    expect(validateTwilioSignature({ authToken: null as unknown as string, signature: good, url })).toBe(false);
  });
});

describe('Plivo signature V3', () => {
  // Computed here from the documented algorithm (https://plivo.com/docs/voice/concepts/signature-validation;
  // plivo-node lib/utils/v3Security.js): GET → URL with its query sorted, then "." + nonce,
  // HMAC-SHA256 with the auth token, base64.
  const token = 'MjAxNi0wNC0yOFQxNToxNjo1NC41NTha';
  const nonce = '05429567804466091622';
  const sign = (data: string, key = token) => createHmac('sha256', key).update(data).digest('base64');

  it('accepts the GET upgrade signature, with the query sorted', () => {
    const url = 'wss://vagent.example.com/v1/media/plivo?tenant=acme&agent_id=ag_1';
    const sig = sign('wss://vagent.example.com/v1/media/plivo?agent_id=ag_1&tenant=acme.' + nonce);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url })).toBe(true);
    // With several auth tokens active, Plivo sends a comma-separated list.
    expect(validatePlivoSignatureV3({ authToken: token, signature: `${sign('other')},${sig}`, nonce, url })).toBe(true);
    // A URL without query signs as scheme://host/path.
    const plain = 'wss://vagent.example.com/v1/media/plivo';
    expect(validatePlivoSignatureV3({ authToken: token, signature: sign(`${plain}.${nonce}`), nonce, url: plain })).toBe(true);
  });

  it('accepts any of several candidate URLs (wss:// as dialled, or written as http://)', () => {
    const wss = 'wss://vagent.example.com/v1/media/plivo';
    const http = 'http://vagent.example.com/v1/media/plivo';
    const sig = sign(`${http}.${nonce}`);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url: wss })).toBe(false);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url: [wss, http] })).toBe(true);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url: [] })).toBe(false);
  });

  it('accepts a POST callback signature (URL, "?", then sorted name=value pairs)', () => {
    const url = 'https://vagent.example.com/answer';
    const params = { To: '+918000000000', From: '+919000000000', CallUUID: 'abc' };
    const sig = sign(`${url}?CallUUID=abcFrom=+919000000000To=+918000000000.${nonce}`);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url, method: 'POST', params })).toBe(true);
  });

  it('rejects a tampered URL, nonce, token or signature, and hostile input without throwing', () => {
    const url = 'wss://vagent.example.com/v1/media/plivo?tenant=acme';
    const sig = sign(`${url}.${nonce}`);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url })).toBe(true);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url: url.replace('acme', 'evil') })).toBe(false);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce: nonce + '1', url })).toBe(false);
    expect(validatePlivoSignatureV3({ authToken: token + 'x', signature: sig, nonce, url })).toBe(false);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig.slice(1), nonce, url })).toBe(false);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce: undefined, url })).toBe(false);
    expect(validatePlivoSignatureV3({ authToken: token, signature: ',,,', nonce, url })).toBe(false);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url: '/relative/only' })).toBe(false);
    expect(validatePlivoSignatureV3({ authToken: token, signature: sig, nonce, url, method: 'PUT' as 'GET' })).toBe(false);
  });
});

describe('Exotel basic auth', () => {
  const header = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
  const expected = { username: 'api_key_1', password: 'tok:en/2' };

  it('parses and accepts the configured API key and token', () => {
    expect(parseBasicAuth(header('api_key_1:tok:en/2'))).toEqual(expected);
    expect(validateExotelBasicAuth(header('api_key_1:tok:en/2'), expected)).toBe(true);
    expect(validateExotelBasicAuth(`basic   ${Buffer.from('api_key_1:tok:en/2').toString('base64')}`, expected)).toBe(true);
  });

  it('rejects other credentials, other schemes and hostile input without throwing', () => {
    expect(validateExotelBasicAuth(header('api_key_1:tok:en/3'), expected)).toBe(false);
    expect(validateExotelBasicAuth(header('api_key_2:tok:en/2'), expected)).toBe(false);
    expect(validateExotelBasicAuth(header('api_key_1tok'), expected)).toBe(false);
    expect(validateExotelBasicAuth(`Bearer ${Buffer.from('api_key_1:tok:en/2').toString('base64')}`, expected)).toBe(false);
    for (const h of [undefined, '', 'Basic', 'Basic !!!', 'Basic QUJD', 'x'.repeat(20_000), 42 as unknown as string]) {
      expect(validateExotelBasicAuth(h, expected)).toBe(false);
    }
    expect(validateExotelBasicAuth(header(':'), { username: '', password: '' })).toBe(false);
  });
});

// ------------------------------------------------------------------------------------------
// Hostile input: parsers throw only typed errors, validators never throw.

describe('hostile input', () => {
  const frames = fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.json({ maxDepth: 4 }),
    fc
      .record({
        event: fc.constantFrom('start', 'media', 'dtmf', 'mark', 'stop', 'clear', 'playedStream', 'clearedAudio', 'connected'),
        start: fc.anything(),
        media: fc.anything(),
        dtmf: fc.anything(),
        mark: fc.anything(),
        name: fc.anything(),
      })
      .map((o) => JSON.stringify(o)),
  );

  it('every parser and the stream either return an event or throw a CarrierProtocolError', () => {
    const parsers = [parseTwilio, parseExotel, parsePlivo];
    fc.assert(
      fc.property(frames, (text) => {
        for (const parse of parsers) {
          try {
            expect(typeof parse(text).type).toBe('string');
          } catch (err) {
            expect(err).toBeInstanceOf(CarrierProtocolError);
          }
        }
      }),
      { numRuns: 400, seed: 16 },
    );
  });

  it('the validators return false, never throw, on arbitrary input', () => {
    const str = fc.oneof(fc.string({ maxLength: 200 }), fc.constant(undefined as unknown as string));
    fc.assert(
      fc.property(str, str, str, str, (a, b, c, d) => {
        expect(validateTwilioSignature({ authToken: a, signature: b, url: c })).toBe(false);
        expect(validatePlivoSignatureV3({ authToken: a, signature: b, nonce: c, url: d })).toBe(false);
        expect(validateExotelBasicAuth(a, { username: b, password: c })).toBe(false);
      }),
      { numRuns: 300, seed: 16 },
    );
  });
});

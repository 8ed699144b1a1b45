/**
 * The transport contract's helpers (src/media/transport.ts) and the fake transport
 * (src/media/fake-transport.ts) that later steps' tests build on.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeTransport } from '../../src/media/fake-transport.js';
import { frameBytesOf, isDtmfDigit, type TransportListener } from '../../src/media/transport.js';

describe('transport helpers', () => {
  it('frameBytesOf gives the bytes of a 20 ms frame', () => {
    expect(frameBytesOf('mulaw', 8000)).toBe(160); // Twilio
    expect(frameBytesOf('pcm16le', 8000)).toBe(320); // Exotel slin 8 kHz
    expect(frameBytesOf('pcm16le', 16000)).toBe(640); // Plivo L16 16 kHz
    expect(frameBytesOf('pcm16le', 24000)).toBe(960);
  });

  it('frameBytesOf refuses a rate without whole samples per frame', () => {
    expect(() => frameBytesOf('mulaw', 0)).toThrow(RangeError);
    expect(() => frameBytesOf('mulaw', 11025)).toThrow(/whole samples per 20 ms frame; got 11025/);
    expect(() => frameBytesOf('pcm16le', 8000.5)).toThrow(RangeError);
  });

  it('isDtmfDigit accepts the 16 keys and nothing else', () => {
    for (const d of '0123456789*#ABCD') expect(isDtmfDigit(d)).toBe(true);
    for (const d of ['', '10', 'a', 'E', ' ', '##']) expect(isDtmfDigit(d)).toBe(false);
  });
});

describe('FakeTransport', () => {
  function listen(t: FakeTransport) {
    const got: string[] = [];
    const listener: TransportListener = {
      onAudio: (pcm) => got.push(`audio:${pcm.length}`),
      onDtmf: (d) => got.push(`dtmf:${d}`),
      onMarkAck: (n) => got.push(`ack:${n}`),
      onStop: (r) => got.push(`stop:${r}`),
    };
    t.listen(listener);
    return got;
  }

  it('acknowledges a mark when the frames before it have played, plus the delay', () => {
    const clock = new FakeClock(0);
    const t = new FakeTransport({ clock, ackDelayMs: 10 });
    const got = listen(t);
    for (let i = 0; i < 3; i++) t.play(Buffer.alloc(160));
    t.mark('m1'); // 3 frames from t = 0: played by 60, acked at 70
    clock.advance(69);
    expect(got).toEqual([]);
    clock.advance(1);
    expect(got).toEqual(['ack:m1']);
  });

  it('clear cancels pending acknowledgements, or echoes them like Twilio when asked', () => {
    const clock = new FakeClock(0);
    const quiet = new FakeTransport({ clock, ackDelayMs: 0 });
    const gotQuiet = listen(quiet);
    quiet.play(Buffer.alloc(160));
    quiet.mark('a');
    quiet.clear();
    clock.advance(100);
    expect(gotQuiet).toEqual([]);

    const echo = new FakeTransport({ clock, ackDelayMs: 0, echoMarksOnClear: true });
    const gotEcho = listen(echo);
    echo.play(Buffer.alloc(160));
    echo.mark('b');
    echo.clear();
    expect(gotEcho).toEqual(['ack:b']);
    expect(echo.count('clear')).toBe(1);
  });

  it('passes caller audio and DTMF through, and nothing after stop; hangup stops once', () => {
    const clock = new FakeClock(0);
    const t = new FakeTransport({ clock });
    const got = listen(t);
    t.pushAudio(new Int16Array(320));
    t.pushDtmf('#');
    t.hangup();
    t.hangup();
    t.pushAudio(new Int16Array(320));
    t.play(Buffer.alloc(160));
    expect(got).toEqual(['audio:320', 'dtmf:#', 'stop:hangup']);
    expect(t.sent.map((a) => a.kind)).toEqual(['hangup']);
  });

  it('refuses a frame of the wrong size', () => {
    const t = new FakeTransport({ clock: new FakeClock(0) });
    expect(() => t.play(Buffer.alloc(161))).toThrow('frame is 161 bytes; this transport takes 160');
  });
});

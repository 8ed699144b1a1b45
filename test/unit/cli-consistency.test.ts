/**
 * One mistake, one code and one exit code (README.md "Exit codes"), in the CLI's local checks:
 * ids that are not ids get the daemon's code and a plain message; `--since` durations in the
 * flag's own terms; "Did you mean" only for a near miss; a recording saved mid-call plays;
 * `call simulate` says who ended the call and which lines were never played.
 */
import { WaveFile } from 'wavefile';
import { describe, expect, it } from 'vitest';
import { closedText, mismatchText } from '../../src/cli/commands/call-simulate-print.js';
import { valueOfReadback } from '../../src/cli/commands/chat-view.js';
import { SaidTracker } from '../../src/cli/commands/call-simulate-said.js';
import { checkId } from '../../src/cli/commands/ids.js';
import { completeWavSizes } from '../../src/cli/commands/recording-file.js';
import { editDistance, nearMiss } from '../../src/cli/commands/suggest.js';
import { durationS } from '../../src/cli/commands/webhook.js';
import { MAX_REPLAY_SINCE_S } from '../../src/contract/index.js';
import { errorObject, exitCodeOf, InvalidValueError } from '../../src/cli/errors.js';
import { ApiError } from '../../src/domain/errors.js';

function refusal(fn: () => unknown): { exit: number; code: string; message: string; param?: string } {
  try {
    fn();
  } catch (err) {
    const o = errorObject(err);
    return { exit: exitCodeOf(err), code: o.code, message: o.message, ...(o.param ? { param: o.param } : {}) };
  }
  throw new Error('not refused');
}

describe('ids given on the command line', () => {
  it('pass when well formed', () => {
    expect(checkId('call', 'cl_4503599627370497')).toBe('cl_4503599627370497');
    expect(checkId('agent', 'ag_clinic_booking')).toBe('ag_clinic_booking');
    expect(checkId('webhook', 'we_3x7kq2m4n5p6r7s2t4va')).toBe('we_3x7kq2m4n5p6r7s2t4va');
  });

  it("are refused with the daemon's code, exit 1, and a message saying what they are not", () => {
    expect(refusal(() => checkId('call', 'foo'))).toEqual({
      exit: 1,
      code: 'session_not_found',
      param: 'call_id',
      message: '"foo" is not a call id: call ids look like cl_4503599627370497 (see vagent call list)',
    });
    expect(refusal(() => checkId('session', 'cl_12'))).toMatchObject({ exit: 1, code: 'session_not_found', param: 'session_id' });
    const agent = refusal(() => checkId('agent', 'ag_ü🙂'));
    expect(agent).toMatchObject({ exit: 1, code: 'workflow_not_found', param: 'agent_id' });
    expect(agent.message).toMatch(/^"ag_ü🙂" is not an agent id: agent ids are ag_ followed by/);
    expect(refusal(() => checkId('webhook', 'foo'))).toMatchObject({ exit: 1, code: 'not_found', param: 'webhook_endpoint_id' });
    expect(refusal(() => checkId('webhook', 'we_nope', { param: 'endpoint_id', flag: '--endpoint' }))).toEqual({
      exit: 1,
      code: 'invalid_request',
      param: 'endpoint_id',
      message:
        '--endpoint "we_nope" is not a webhook endpoint id: webhook endpoint ids are we_ followed by 20 of a-z and 2-7 (see vagent webhook list)',
    });
    expect(refusal(() => checkId('event', 'evt_foo'))).toMatchObject({ exit: 1, code: 'invalid_request', param: 'event_id' });
  });

  it('never echo a hostile id whole, nor its control characters raw', () => {
    const r = refusal(() => checkId('call', `cl_${'9'.repeat(5000)}\u001b[2J`));
    expect(r.message.length).toBeLessThan(200);
    expect(r.message).not.toContain('\u001b');
  });
});

describe('--since durations', () => {
  it('takes d, h, m and s, combined in that order', () => {
    expect(durationS('90s')).toBe(90);
    expect(durationS('15m')).toBe(900);
    expect(durationS('1h30m')).toBe(5400);
    expect(durationS('2d12h')).toBe(216_000);
    expect(durationS('7d')).toBe(MAX_REPLAY_SINCE_S);
    expect(durationS(' 1s ')).toBe(1);
  });

  it('refuses the rest as the daemon would (invalid_request, exit 1), saying the bound in the flag’s terms', () => {
    for (const bad of ['8d', '0s', '-5m', '1h30', '30m1h', 'yesterday', '', '1.5h', '604801s', `${'9'.repeat(40)}s`]) {
      const r = refusal(() => durationS(bad));
      expect(r, bad).toMatchObject({ exit: 1, code: 'invalid_request', param: 'since' });
      expect(r.message, bad).not.toMatch(/604800|whole number of seconds/);
    }
    expect(refusal(() => durationS('8d')).message).toBe(
      '--since must be from 1s to at most 7d (the daemon replays the last 7 days at most), not "8d"',
    );
    expect(refusal(() => durationS('-5m')).message).toMatch(/without a minus sign/);
    expect(() => durationS('1h30')).toThrow(InvalidValueError);
  });
});

describe('"Did you mean"', () => {
  const commands = ['serve', 'login', 'logout', 'trunk', 'number', 'agent', 'session', 'call', 'chat', 'events', 'webhook', 'dashboard'];
  it('suggests a near miss only', () => {
    expect(nearMiss('bogus', commands)).toBeUndefined();
    expect(nearMiss('xyz', commands)).toBeUndefined();
    expect(nearMiss('sesion', commands)).toBe('session');
    expect(nearMiss('evnets', commands)).toBe('events');
    expect(nearMiss('dashbord', commands)).toBe('dashboard');
    expect(nearMiss('cal', commands)).toBe('call');
    expect(nearMiss('logut', commands)).toBe('logout');
    expect(editDistance('bogus', 'logout')).toBe(3);
  });
});

describe('a recording saved while the call is on the line', () => {
  function wav(channels: number, frames: number, dataSize: number | null): Buffer {
    const w = new WaveFile();
    w.fromScratch(
      channels,
      16_000,
      '16',
      new Array(frames * channels).fill(0).map((_v, i) => (i % 200) * 10),
    );
    const b = Buffer.from(w.toBuffer());
    if (dataSize !== null) {
      b.writeUInt32LE(dataSize, 40);
      b.writeUInt32LE(36, 4);
    }
    return b;
  }

  it("gets its header's sizes from what it holds, cut to whole frames, so it plays", () => {
    const partial = Buffer.concat([wav(2, 1600, 0), Buffer.from([1, 2, 3])]); // a frame cut mid-way
    const { bytes, fixed } = completeWavSizes(partial);
    expect(fixed).toBe(true);
    expect(bytes.readUInt32LE(40)).toBe(1600 * 4);
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
    const read = new WaveFile(bytes);
    expect((read.getSamples(false, Int16Array) as unknown as Int16Array[])[0]!.length).toBe(1600);
    expect(partial.readUInt32LE(40)).toBe(0); // the download itself is not changed
  });

  it('leaves a finished recording and anything that is not a WAV file as it is', () => {
    const done = wav(1, 800, null);
    expect(completeWavSizes(done)).toEqual({ bytes: done, fixed: false });
    const text = Buffer.from('not a wav file at all, just some text that is long enough');
    expect(completeWavSizes(text)).toEqual({ bytes: text, fixed: false });
    expect(completeWavSizes(Buffer.alloc(10)).fixed).toBe(false);
  });
});

describe('call simulate: how the call ended', () => {
  it('names who ended it', () => {
    expect(closedText({ code: 1005, by: 'bot' }, null)).toBe('the daemon closed the stream');
    expect(closedText({ code: 1000, by: 'bot' }, 'api_hangup')).toMatch(/^hung up by the API\/operator/);
    expect(closedText({ code: 1000, by: 'bot' }, 'completed_by_agent')).toBe('the agent hung up');
    expect(closedText({ code: 1000, by: 'bot' }, null)).toBe('the agent hung up');
    expect(closedText({ code: 1000, by: 'caller' }, 'caller_hung_up')).toBe('the caller hung up');
  });

  it('never says every line was heard when some were never played', () => {
    const said = new SaidTracker([
      { kind: 'say', text: 'Priya Sharma' },
      { kind: 'say', text: 'yes' },
    ]);
    const played = (n: number, replied: boolean) => ({
      turns: Array.from({ length: n }, (_v, i) => ({
        turn: i,
        kind: 'say' as const,
        startMs: 0,
        bargeIn: false,
        ...(replied ? { latencyMs: 500 } : {}),
      })),
    });
    expect(mismatchText(said, played(0, false), true)).toBe('interrupted before any reply: 2 --say lines not played');
    expect(mismatchText(said, played(1, false), false)).toBe(
      '1 --say line played but not answered; the call ended first: 1 --say line not played',
    );
    said.next({ user_text: 'Priya Sharma' });
    expect(mismatchText(said, played(1, true), true)).toBe('interrupted before the end: 1 --say line not played');
    said.next({ user_text: 'yes' });
    expect(mismatchText(said, played(2, true), false)).toMatch(/none: every --say line was heard as said/);
  });
});

it('an ApiError from a local check prints as the API error it is', () => {
  expect(errorObject(new ApiError('not_found', 'x', { param: 'p' }))).toEqual({ code: 'not_found', message: 'x', param: 'p' });
});

it('/state in a chat: the value a readback line reads back', () => {
  const lines = ['That is {{value}}, right?', 'I heard {{value}}. Is that right?'];
  expect(valueOfReadback('That is Priya Sharma, right?', lines)).toBe('Priya Sharma');
  expect(valueOfReadback('I heard 5:00 PM. Is that right?', lines)).toBe('5:00 PM');
  expect(valueOfReadback('Shall I book it?', lines)).toBe('Shall I book it?');
});

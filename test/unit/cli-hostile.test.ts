/**
 * The pure parts of the CLI's defences against hostile input: `printable` and `quoted`
 * (src/cli/output.ts), the bounded error message (src/cli/errors.ts), the API key check
 * (src/cli/profile.ts, src/client/http.ts), the answer of a server that is not a vagent daemon,
 * and the private mode of a saved recording (src/cli/out-file.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiErrorOf, HttpTransport, MalformedApiKeyError } from '../../src/client/http.js';
import { boundedMessage, errorObject, exitCodeOf, MESSAGE_MAX, UsageError } from '../../src/cli/errors.js';
import { printable, quoted } from '../../src/cli/output.js';
import { checkApiKey } from '../../src/cli/profile.js';
import { checkWritable, writeFileWhole } from '../../src/cli/out-file.js';
import { sessionBody } from '../../src/cli/commands/chat.js';

describe('printable', () => {
  it('escapes C0, DEL and C1 controls, line separators and bidi overrides', () => {
    expect(printable('a\u0000b\u0001c\u001b[31md\u007f\u009b2J')).toBe('a\\x00b\\x01c\\x1b[31md\\x7f\\x9b2J');
    expect(printable('one\ntwo\r\tthree')).toBe('one\\ntwo\\r\\tthree');
    expect(printable('x\u2028y\u202ez\u2066')).toBe('x\\u2028y\\u202ez\\u2066');
  });

  it('keeps Hindi, emoji with their joiners, and other printable Unicode', () => {
    for (const s of ['प्रिया शर्मा 🙂', 'क्‍ष', '👩‍⚕️ Dr Rao', '₹12,500.00 · “quoted”', 'தமிழ் বাংলা 日本語']) expect(printable(s)).toBe(s);
  });
});

describe('quoted', () => {
  it('quotes a short value whole and a long one by its first 80 characters and its length', () => {
    expect(quoted('98765')).toBe('"98765"');
    expect(quoted('x'.repeat(80))).toBe(`"${'x'.repeat(80)}"`);
    expect(quoted('x'.repeat(100_000))).toBe(`"${'x'.repeat(80)}…" (100000 characters)`);
  });

  it('counts code points, so an emoji is never cut in half, and escapes control characters', () => {
    const q = quoted('🙂'.repeat(81));
    expect(q).toBe(`"${'🙂'.repeat(80)}…" (81 characters)`);
    expect(quoted('a\u001b[31m')).toBe('"a\\x1b[31m"');
  });
});

describe('boundedMessage', () => {
  it('leaves a message within bounds alone and cuts a longer one, saying its length', () => {
    expect(boundedMessage('short')).toBe('short');
    const long = 'm'.repeat(MESSAGE_MAX + 10);
    expect(boundedMessage(long)).toBe(`${'m'.repeat(MESSAGE_MAX)}… (${MESSAGE_MAX + 10} characters)`);
    expect(errorObject(new Error(long)).message.length).toBeLessThan(MESSAGE_MAX + 30);
  });
});

describe('API keys', () => {
  it('accepts one line of printable characters', () => {
    for (const k of ['vk_' + 'a'.repeat(43), 'vk_test', 'k']) expect(checkApiKey(k, '--api-key')).toBe(k);
  });

  it('refuses control characters, spaces, line breaks and JSON, never quoting the key', () => {
    for (const k of ['vk_abc\ndef', 'vk_abc def', 'vk_\u001b[31m', 'vk_é', '{"key":"vk_abc"}', '"vk_abc"']) {
      let err: unknown;
      try {
        checkApiKey(k, 'stdin');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect(exitCodeOf(err)).toBe(2);
      expect((err as Error).message).toBe('the API key from stdin is malformed (it must be a single line of printable characters: vk_…)');
      expect((err as UsageError).hint ?? '').not.toContain('vk_abc');
    }
    expect(() => checkApiKey('{"key":"vk_abc"}', 'stdin')).toThrow(
      expect.objectContaining({ hint: expect.stringContaining('got JSON: pass the key itself') }),
    );
  });

  it('the client refuses a malformed key itself (exit 2 at the CLI), its message without the key', () => {
    expect(() => new HttpTransport({ url: 'http://127.0.0.1:9', apiKey: 'vk_secret\nx' })).toThrow(MalformedApiKeyError);
    try {
      new HttpTransport({ url: 'http://127.0.0.1:9', apiKey: 'vk_secret\nx' });
    } catch (err) {
      expect((err as Error).message).not.toContain('secret');
      expect(exitCodeOf(err)).toBe(2);
      expect(errorObject(err).code).toBe('bad_arguments');
    }
  });
});

describe('apiErrorOf', () => {
  const res = (status: number) => new Response(null, { status });
  it('reads the contract error body', () => {
    const e = apiErrorOf(res(400), { error: { code: 'invalid_request', message: 'text must be …', param: 'text' } }, 'http://d');
    expect(e).toMatchObject({ status: 400, code: 'invalid_request', message: 'text must be …', param: 'text' });
  });

  it('names an answer without one (empty, or other JSON) as not a vagent daemon', () => {
    for (const body of [undefined, {}, { message: 'Not Found' }, { error: 'nope' }, { error: { code: 1 } }]) {
      const e = apiErrorOf(res(404), body, 'http://10.255.255.1:8787');
      expect(e.code).toBe('invalid_response');
      expect(e.message).toBe('the server at http://10.255.255.1:8787 answered HTTP 404 without a vagent error; is it a vagent daemon?');
    }
  });
});

describe('output files', () => {
  it('a saved file is written whole with the mode asked for, replacing an older one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-out-'));
    const file = path.join(dir, 'call.wav');
    fs.writeFileSync(file, 'old', { mode: 0o644 });
    checkWritable(file, 'the recording');
    writeFileWhole(file, new Uint8Array([1, 2, 3]), 'the recording', 0o600);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect([...fs.readFileSync(file)]).toEqual([1, 2, 3]);
    expect(fs.readdirSync(dir)).toEqual(['call.wav']);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a file under a missing directory or under a file', () => {
    expect(() => checkWritable('/nonexistent/dir/x.wav', 'the recording')).toThrow(
      'cannot write the recording /nonexistent/dir/x.wav: the directory /nonexistent/dir does not exist',
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-out-'));
    fs.writeFileSync(path.join(dir, 'f'), '');
    expect(() => checkWritable(path.join(dir, 'f', 'x.xml'), 'the JUnit report')).toThrow(/is not a directory$/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('chat --context', () => {
  it('reads @file.json as call place does', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-ctx-'));
    fs.writeFileSync(path.join(dir, 'c.json'), '{"seller_name": "ShopKart"}');
    expect(sessionBody('ag_x', { context: `@${path.join(dir, 'c.json')}` }).context).toEqual({ seller_name: 'ShopKart' });
    expect(() => sessionBody('ag_x', { context: `@${path.join(dir, 'none.json')}` })).toThrow(UsageError);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

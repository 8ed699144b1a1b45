import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CredentialBox } from '../../src/app/secrets.js';

describe('CredentialBox (AES-256-GCM)', () => {
  const key = crypto.randomBytes(32);
  const box = new CredentialBox(key);
  const creds = { username: 'acme', password: 'S3cr3t-पासवर्ड-🔑' };

  it('round-trips credentials bound to tenant and trunk', () => {
    const sealed = box.seal(creds, 'default', 'tk_aaaaaaaaaaaaaaaaaaaa');
    expect(box.open(sealed, 'default', 'tk_aaaaaaaaaaaaaaaaaaaa')).toEqual(creds);
    expect(sealed.includes(Buffer.from(creds.password))).toBe(false);
    expect(sealed.includes(Buffer.from('acme'))).toBe(false);
  });

  it('uses a fresh IV per seal', () => {
    const a = box.seal(creds, 't', 'tk_a');
    const b = box.seal(creds, 't', 'tk_a');
    expect(a.equals(b)).toBe(false);
  });

  it('refuses another tenant or trunk (AAD), another key, and any flipped byte', () => {
    const sealed = box.seal(creds, 'default', 'tk_one');
    expect(() => box.open(sealed, 'other', 'tk_one')).toThrow(/cannot be decrypted/);
    expect(() => box.open(sealed, 'default', 'tk_two')).toThrow(/cannot be decrypted/);
    expect(() => new CredentialBox(crypto.randomBytes(32)).open(sealed, 'default', 'tk_one')).toThrow(/cannot be decrypted/);
    for (const i of [0, 5, 20, sealed.length - 1]) {
      const bad = Buffer.from(sealed);
      bad[i] = bad[i]! ^ 0x01;
      expect(() => box.open(bad, 'default', 'tk_one')).toThrow(/cannot be decrypted/);
    }
  });

  it('never puts the secret in its error message', () => {
    const sealed = box.seal(creds, 'default', 'tk_one');
    try {
      box.open(sealed, 'default', 'tk_other');
      expect.unreachable();
    } catch (err) {
      expect(String(err)).not.toContain(creds.password);
    }
  });

  it('requires a 32-byte key', () => {
    expect(() => new CredentialBox(crypto.randomBytes(16))).toThrow(RangeError);
  });
});

/**
 * Sealing of trunk credentials at rest: AES-256-GCM, a random 12-byte IV per
 * seal, additional authenticated data `tenant|trunk` so a sealed blob cannot be moved to
 * another trunk or tenant. Layout: `version(1) | iv(12) | tag(16) | ciphertext`.
 */
import crypto from 'node:crypto';
import { randomBytes } from '../domain/ids.js';

/** Trunk credentials as sent in `POST /v1/trunks` `auth`. Write-only. */
export interface TrunkCredentials {
  username: string;
  password: string;
}

const VERSION = 1;

/** Seals and opens trunk credentials with one master key. */
export class CredentialBox {
  readonly #key: Buffer;

  /** @param masterKey 32 bytes. @throws RangeError for another length. */
  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new RangeError('master key must be 32 bytes');
    this.#key = Buffer.from(masterKey);
  }

  /** Encrypts `creds` bound to (tenantId, trunkId). */
  seal(creds: TrunkCredentials, tenantId: string, trunkId: string): Buffer {
    // From the pooled CSPRNG (each byte used once): a per-call crypto.randomBytes costs ~8 µs here.
    const iv = Buffer.from(randomBytes(12));
    const cipher = crypto.createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(`${tenantId}|${trunkId}`, 'utf8'));
    const plain = Buffer.from(JSON.stringify({ u: creds.username, p: creds.password }), 'utf8');
    const ct = Buffer.concat([cipher.update(plain), cipher.final()]);
    plain.fill(0);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ct]);
  }

  /**
   * Decrypts a sealed blob.
   * @throws Error("trunk credentials cannot be decrypted …") on a wrong key, AAD or tampering.
   */
  open(sealed: Buffer, tenantId: string, trunkId: string): TrunkCredentials {
    try {
      if (sealed[0] !== VERSION) throw new Error('version');
      const decipher = crypto.createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(1, 13));
      decipher.setAAD(Buffer.from(`${tenantId}|${trunkId}`, 'utf8'));
      decipher.setAuthTag(sealed.subarray(13, 29));
      const plain = Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]);
      const obj = JSON.parse(plain.toString('utf8')) as { u: string; p: string };
      return { username: obj.u, password: obj.p };
    } catch {
      throw new Error('trunk credentials cannot be decrypted (wrong master key, or the record was altered)');
    }
  }

  /** Encrypts a secret string bound to (tenantId, purpose), e.g. a webhook signing secret. */
  sealText(text: string, tenantId: string, purpose: string): Buffer {
    return this.seal({ username: purpose, password: text }, tenantId, `secret:${purpose}`);
  }

  /**
   * Decrypts what {@link sealText} sealed.
   * @throws Error on a wrong key, AAD or tampering (the message never holds the secret).
   */
  openText(sealed: Buffer, tenantId: string, purpose: string): string {
    return this.open(sealed, tenantId, `secret:${purpose}`).password;
  }
}

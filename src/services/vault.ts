/**
 * Encryption of everything secret at rest: AES-256-GCM, a fresh 96-bit IV per value, and the owning
 * record's ids as associated data, so a ciphertext moved to another row no longer decrypts.
 * Layout of a sealed value: version (1 byte) | IV (12) | tag (16) | ciphertext.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class Vault {
  readonly #key: Buffer;
  readonly #macKey: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('the master key must be 32 bytes');
    // Separate keys for separate jobs: one for encryption, one for MACs (CSRF tokens, cursors).
    this.#key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'keyward/aes-256-gcm', 32));
    this.#macKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'keyward/hmac-sha-256', 32));
  }

  seal(plaintext: string, associatedData: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Uint8Array, associatedData: string): string {
    const value = Buffer.from(sealed);
    if (value[0] !== VERSION) throw new Error('unknown sealed value version');
    const iv = value.subarray(1, 1 + IV_BYTES);
    const tag = value.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, iv);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(value.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  sealJson(value: unknown, associatedData: string): Buffer {
    return this.seal(JSON.stringify(value), associatedData);
  }

  openJson<T>(sealed: Uint8Array, associatedData: string): T {
    return JSON.parse(this.open(sealed, associatedData)) as T;
  }

  /** HMAC-SHA-256, base64url: for values the service hands out and must recognise later. */
  mac(message: string): string {
    return createHmac('sha256', this.#macKey).update(message).digest('base64url');
  }
}

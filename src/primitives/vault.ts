/**
 * Encryption of everything secret at rest: AES-256-GCM, a fresh 96-bit IV per value, and the owning
 * record's ids as associated data, so a ciphertext moved to another row no longer decrypts.
 *
 * Layout of a sealed value, version 2: version (1 byte) | key id (8) | IV (12) | tag (16) | ciphertext.
 * The key id says which master key sealed the value, so that a rotation can tell what is left to
 * reseal and a reader opens each value with the right key. Version 1 (no key id, written before
 * rotation existed) stays readable: each key the vault was given is tried in turn.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const VERSION_1 = 1;
const VERSION = 2;
const KEY_ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The public name of a master key: an HMAC of a fixed label under the key, so it says nothing about
 * the key (unlike a prefix of it) yet is the same on every node given that key.
 */
export function masterKeyId(masterKey: Buffer): Buffer {
  return createHmac('sha256', masterKey).update('keyward/master-key-id').digest().subarray(0, KEY_ID_BYTES);
}

interface SealingKey {
  id: Buffer;
  aes: Buffer;
}

function sealingKey(masterKey: Buffer): SealingKey {
  if (masterKey.length !== 32) throw new Error('the master key must be 32 bytes');
  return { id: masterKeyId(masterKey), aes: Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'keyward/aes-256-gcm', 32)) };
}

function decrypt(key: Buffer, iv: Buffer, tag: Buffer, body: Buffer, associatedData: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
}

export class Vault {
  readonly #current: SealingKey;
  /** The current key first, then the old ones (KEYWARD_OLD_MASTER_KEYS), by key id. */
  readonly #readable = new Map<string, SealingKey>();
  readonly #macKey: Buffer;

  constructor(masterKey: Buffer, oldMasterKeys: Buffer[] = []) {
    this.#current = sealingKey(masterKey);
    for (const key of [masterKey, ...oldMasterKeys]) {
      const k = sealingKey(key);
      if (!this.#readable.has(k.id.toString('hex'))) this.#readable.set(k.id.toString('hex'), k);
    }
    // Separate keys for separate jobs: one for encryption, one for MACs (CSRF tokens, cursors).
    // MACs come from the current key only: they live minutes, not years, so a rotation lets them lapse.
    this.#macKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'keyward/hmac-sha-256', 32));
  }

  /** The current key's id (hex): what every value sealed from now on records. */
  get keyId(): string {
    return this.#current.id.toString('hex');
  }

  /** The first bytes of every value sealed under the current key (version and key id). */
  get currentPrefix(): Buffer {
    return Buffer.concat([Buffer.from([VERSION]), this.#current.id]);
  }

  seal(plaintext: string, associatedData: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#current.aes, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([this.currentPrefix, iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Uint8Array, associatedData: string): string {
    // A view, not a copy: the drivers hand over Buffers already.
    const value = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (value[0] === VERSION) {
      const key = this.#readable.get(value.subarray(1, 1 + KEY_ID_BYTES).toString('hex'));
      if (!key) throw new Error('sealed under a master key this process was not given');
      const iv = value.subarray(1 + KEY_ID_BYTES, 1 + KEY_ID_BYTES + IV_BYTES);
      const tag = value.subarray(1 + KEY_ID_BYTES + IV_BYTES, 1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES);
      return decrypt(key.aes, iv, tag, value.subarray(1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES), associatedData);
    }
    if (value[0] !== VERSION_1) throw new Error('unknown sealed value version');
    const iv = value.subarray(1, 1 + IV_BYTES);
    const tag = value.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const body = value.subarray(1 + IV_BYTES + TAG_BYTES);
    for (const key of this.#readable.values()) {
      try {
        return decrypt(key.aes, iv, tag, body, associatedData);
      } catch {
        // GCM's tag check failed: not this key (or not this row); try the next.
      }
    }
    throw new Error('no master key given opens this sealed value');
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

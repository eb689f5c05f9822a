/**
 * Opened secrets kept by their sealed bytes (services/credentials/opened-secrets.ts): what is found is
 * what opening the row would give, for a minute at most, for the vault that opened it, frozen, and a
 * sealed value too large to keep is opened every time. (That a row's bytes copied onto another row are
 * refused is shown end to end in proxy-reads-until-change.test.ts.)
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Vault } from '../../src/primitives/vault.js';
import { type CredentialSecret, credentialAad } from '../../src/services/credentials/credentials.js';
import { keptOpenedSecret } from '../../src/services/credentials/opened-secrets.js';

const ids = { id: 'cred_1', server_id: 'srv_1', member_id: 'mem_1' };
const sealedRow = (vault: Vault, secret: CredentialSecret) => ({ ...ids, secret: vault.sealJson(secret, credentialAad(ids.id, ids.server_id, ids.member_id)) });
const apiKey = (value: string): CredentialSecret => ({ type: 'static', values: { apiKey: value } });

describe('opened secrets kept', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('are what opening gives, the same object while kept, and frozen', () => {
    const vault = new Vault(randomBytes(32));
    const row = sealedRow(vault, apiKey('sk_live_1'));
    const first = keptOpenedSecret(vault, row);
    expect(first).toEqual(apiKey('sk_live_1'));
    expect(keptOpenedSecret(vault, row)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen((first as { values: object }).values)).toBe(true);
    // The same value sealed again is other bytes: opened anew.
    const resealed = sealedRow(vault, apiKey('sk_live_2'));
    expect(keptOpenedSecret(vault, resealed)).toEqual(apiKey('sk_live_2'));
  });

  it('are dropped every minute', () => {
    vi.useFakeTimers();
    // A vault of its own, so that its map (and its timer) is made under the fake clock.
    const vault = new Vault(randomBytes(32));
    const row = sealedRow(vault, apiKey('sk_live_3'));
    const first = keptOpenedSecret(vault, row);
    vi.advanceTimersByTime(59_000);
    expect(keptOpenedSecret(vault, row)).toBe(first);
    vi.advanceTimersByTime(1_000);
    const after = keptOpenedSecret(vault, row);
    expect(after).not.toBe(first);
    expect(after).toEqual(first);
  });

  it('are never found by a vault without the master key they were sealed under', () => {
    const vault = new Vault(randomBytes(32));
    const row = sealedRow(vault, apiKey('sk_live_4'));
    expect(keptOpenedSecret(vault, row)).toEqual(apiKey('sk_live_4'));
    expect(() => keptOpenedSecret(new Vault(randomBytes(32)), row)).toThrow(/master key/);
  });

  it('are not kept where the sealed value is large: it is opened every time', () => {
    const vault = new Vault(randomBytes(32));
    const row = sealedRow(vault, { type: 'oauth2', accessToken: 'a'.repeat(5_000), refreshToken: null, tokenType: 'Bearer' });
    const first = keptOpenedSecret(vault, row);
    expect(first).toMatchObject({ accessToken: 'a'.repeat(5_000) });
    expect(keptOpenedSecret(vault, row)).not.toBe(first);
  });
});

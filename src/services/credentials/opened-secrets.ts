/**
 * Credentials' secrets as opened, kept by the bytes they were sealed in, for the two paths that open
 * them on every request: a member's read (GET /v1/end-users/{id}) and a proxied call.
 *
 * Why: both read the credential's row afresh after a change is committed (a proxied call's read is
 * kept until then: store/reads-until-change.ts), and a member's read every time; yet the sealed bytes they find are the same
 * until the credential itself changes, and opening them (AES-GCM, then the JSON) cost ~40 µs a
 * credential (bench/RESULTS.md). What is found here is what opening would give:
 * - the key is the sealed bytes and the associated data they were sealed under, so a changed secret
 *   (a refresh, a reconnect, a master key rotation re-sealing it) is other bytes and is opened anew,
 *   and a row's bytes copied onto another row are opened, and refused, as before;
 * - per vault: a vault without the master key a value was sealed under never finds it here;
 * - the read still decides whether there is a credential to use: a revoked one is never read, so
 *   what is kept of it is never used.
 *
 * Exposure: the process holds the master key, which opens every stored secret, so a secret kept here is
 * no new exposure to whoever can read its memory; what is new is a revoked credential's secret left in
 * memory after its row was erased, and for that everything kept is dropped every minute, the bound the
 * proxied calls' reads kept have (store/reads-until-change.ts). Kept frozen: the read puts a static
 * credential's values in its answer as they are, so nothing may change them for the next request.
 */
import { BoundedMap, clearEvery } from '../../primitives/insertion-ordered-map.js';
import type { Vault } from '../../primitives/vault.js';
import type { CredentialRow } from '../../store/schema.js';
import { type CredentialSecret, credentialAad } from './credentials.js';

/**
 * Memory: each entry holds its sealed bytes (the key) and the secret opened, so at most
 * MAX_KEPT_SECRETS × 2 × MAX_KEPT_SEALED_BYTES (~16 MiB) however large the secrets stored; a sealed
 * value larger than that (a long JWT access token with its refresh token, say) is opened every time.
 */
const MAX_KEPT_SECRETS = 2_000;
const MAX_KEPT_SEALED_BYTES = 4 * 1024;
const CLEARED_EVERY_MS = 60_000;

const keptByVault = new WeakMap<Vault, BoundedMap<Readonly<CredentialSecret>>>();

function keptFor(vault: Vault): BoundedMap<Readonly<CredentialSecret>> {
  let kept = keptByVault.get(vault);
  if (!kept) {
    kept = new BoundedMap<Readonly<CredentialSecret>>(MAX_KEPT_SECRETS);
    keptByVault.set(vault, kept);
    clearEvery(kept, CLEARED_EVERY_MS);
  }
  return kept;
}

function frozen(secret: CredentialSecret): Readonly<CredentialSecret> {
  if (secret.type === 'static') Object.freeze(secret.values);
  return Object.freeze(secret);
}

/** The credential's secret as opening its row gives it (openCredentialSecret), opened once per sealed value and minute. */
export function keptOpenedSecret(vault: Vault, row: Pick<CredentialRow, 'id' | 'server_id' | 'member_id' | 'secret'>): Readonly<CredentialSecret> {
  const aad = credentialAad(row.id, row.server_id, row.member_id);
  const open = () => vault.openJson<CredentialSecret>(row.secret, aad);
  if (row.secret.byteLength > MAX_KEPT_SEALED_BYTES) return open();
  // latin1: one character per byte, so no two sealed values give the same text.
  const key = `${aad}\0${Buffer.from(row.secret.buffer, row.secret.byteOffset, row.secret.byteLength).toString('latin1')}`;
  const kept = keptFor(vault);
  let secret = kept.get(key);
  if (!secret) {
    secret = frozen(open());
    kept.set(key, secret);
  }
  return secret;
}

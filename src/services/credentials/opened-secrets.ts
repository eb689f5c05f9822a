/**
 * Credentials' secrets as opened, kept by the bytes they were sealed in, for the two paths that open
 * them on every request: a member's read (GET /v1/end-users/{id}) and a proxied call.
 *
 * Why: both read the credential's row afresh every time on PostgreSQL (a revocation must be seen at
 * once on every node), and on SQLite after any commit; yet the sealed bytes they find are the same
 * until the credential itself changes, and opening them (AES-GCM, then the JSON) cost ~40 µs a
 * credential (bench/RESULTS.md). What is found here is what opening would give:
 * - the key is the sealed bytes and the associated data they were sealed under, so a changed secret
 *   (a refresh, a reconnect, a master key rotation re-sealing it) is other bytes and is opened anew,
 *   and a row's bytes copied onto another row are opened, and refused, as before;
 * - the read still decides whether there is a credential to use: a revoked one is never read, so
 *   what is kept of it is never used.
 *
 * Exposure: the process holds the master key, which opens every stored secret, so a secret kept here is
 * no new exposure to whoever can read its memory; what is new is a revoked credential's secret left in
 * memory after its row was erased, and for that everything kept is dropped every minute, the bound the
 * reads kept on SQLite have (store/reads-until-change.ts). Shared, never written: callers read only.
 */
import { BoundedMap } from '../../primitives/insertion-ordered-map.js';
import type { Vault } from '../../primitives/vault.js';
import type { CredentialRow } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import { type CredentialSecret, credentialAad, openCredentialSecret } from './credentials.js';

/** Secrets kept at most, per vault; past it the oldest goes (a miss costs only the opening). */
const KEPT_AT_MOST = 10_000;
/** How long anything is kept at most. */
const KEPT_AT_MOST_MS = 60_000;

/** Per vault: a context with another master key (tests run several) never finds another's secrets. */
const keptByVault = new WeakMap<Vault, BoundedMap<Readonly<CredentialSecret>>>();

function keptFor(vault: Vault): BoundedMap<Readonly<CredentialSecret>> {
  let kept = keptByVault.get(vault);
  if (!kept) {
    const made = new BoundedMap<Readonly<CredentialSecret>>(KEPT_AT_MOST);
    keptByVault.set(vault, made);
    // Held weakly: the timer neither keeps the map alive nor outlives it.
    const held = new WeakRef(made);
    const sweep = setInterval(() => {
      const map = held.deref();
      if (map) map.clear();
      else clearInterval(sweep);
    }, KEPT_AT_MOST_MS);
    sweep.unref();
    kept = made;
  }
  return kept;
}

/** The credential's secret as openCredentialSecret gives it, opened once per sealed value and minute. */
export function keptOpenedSecret(ctx: ServiceContext, row: Pick<CredentialRow, 'id' | 'server_id' | 'member_id' | 'secret'>): Readonly<CredentialSecret> {
  const sealed = Buffer.from(row.secret.buffer, row.secret.byteOffset, row.secret.byteLength);
  // latin1: one character per byte, so no two sealed values give the same text.
  const key = `${credentialAad(row.id, row.server_id, row.member_id)}\0${sealed.toString('latin1')}`;
  const kept = keptFor(ctx.vault);
  let secret = kept.get(key);
  if (!secret) {
    secret = openCredentialSecret(ctx, row);
    kept.set(key, secret);
  }
  return secret;
}

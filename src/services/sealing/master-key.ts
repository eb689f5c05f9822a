/**
 * The master key checked at start-up (CONTRACT 5). Each key the data has been sealed under has a row
 * in `master_keys` with a check value sealed under it; a process starts only if the keys it was
 * given open every key still in use. A wrong KEYWARD_MASTER_KEY would otherwise start a healthy
 * service that answers 500 on every read and seals new values under a key nothing else can open.
 *
 * Reading those few rows is enough, however many values are sealed: the database refuses a value
 * under a retired key (migrations/013's trigger), so every value is under a key whose row is not
 * retired, and no start-up has to scan the sealed columns for the key ids they hold.
 */
import { ConfigError } from '../../config.js';
import { Vault } from '../../primitives/vault.js';
import type { Store } from '../../store/store.js';

const CHECK_TEXT = 'keyward master key check';
const checkAad = (keyId: string) => `master_keys|${keyId}`;
const ROTATE_HINT = 'to change keys, give the previous one in KEYWARD_OLD_MASTER_KEYS and run keyward master-key rotate';

function opens(vault: Vault, sealed: Uint8Array, associatedData: string, expected?: string): boolean {
  try {
    const plaintext = vault.open(sealed, associatedData);
    return expected === undefined || plaintext === expected;
  } catch {
    return false;
  }
}

/** Some value sealed before check values existed, with the associated data it was sealed with. */
async function anySealedValue(store: Store): Promise<{ sealed: Uint8Array; aad: string } | null> {
  const found = await store.masterKeys.anySealedValue();
  if (!found) return null;
  // Loaded only here, on a database made before check values existed: the associated data comes
  // from every service that seals (credentials, OAuth flows and their client, webhooks…), which a
  // start on any other database, and every CLI command, need not load.
  const { sealedValueAad } = await import('./sealed-value-aad.js');
  return { sealed: found.row[found.column.column] as Uint8Array, aad: sealedValueAad(found.column, found.row) };
}

/** Records `vault`'s key as one the data is sealed under (again, if a rotation had retired it). */
async function recordKey(store: Store, vault: Vault, now: string): Promise<void> {
  await store.masterKeys.record(vault.keyId, vault.seal(CHECK_TEXT, checkAad(vault.keyId)), now);
}

/**
 * Refuses (ConfigError, one line, nothing written) unless the current key, or an old key given
 * beside it, is proven by the check values, and every key still in use was given. Records the
 * current key when it is new: that is how a rotation starts.
 */
export async function verifyMasterKeys(store: Store, keys: { current: Buffer; old: Buffer[] }, now: string): Promise<void> {
  const current = new Vault(keys.current);
  const given = new Map([current, ...keys.old.map((k) => new Vault(k))].map((v) => [v.keyId, v]));
  await store.transaction(async () => {
    // Two nodes starting at once on a new database must not both record a key.
    await store.masterKeys.lockAgainstOtherStarts();
    const rows = await store.masterKeys.all();
    let active = rows.filter((r) => r.retired_at === null);
    if (active.length === 0) {
      // A new database, or one made before check values existed: adopt a key only if it opens
      // what is already sealed.
      const sample = await anySealedValue(store);
      if (sample) {
        const opener = [...given.values()].find((v) => opens(v, sample.sealed, sample.aad));
        if (!opener) {
          throw new ConfigError('KEYWARD_MASTER_KEY', `does not open the values already sealed in this database (key id ${current.keyId}); ${ROTATE_HINT}`);
        }
        await recordKey(store, opener, now);
        const recorded = await store.masterKeys.find(opener.keyId);
        active = recorded ? [recorded] : [];
      }
    }
    const unproven = active.filter((r) => {
      const vault = given.get(r.key_id);
      return !vault || !opens(vault, r.check_value, checkAad(r.key_id), CHECK_TEXT);
    });
    if (active.length > 0 && unproven.length === active.length) {
      const retired = rows.find((r) => r.key_id === current.keyId && r.retired_at !== null);
      const inUse = active.map((r) => r.key_id).join(', ');
      throw new ConfigError(
        'KEYWARD_MASTER_KEY',
        retired
          ? `key id ${current.keyId} was retired by keyward master-key rotate on ${retired.retired_at}; start with the current master key (key id ${inUse})`
          : `is not the master key this database was sealed with (given key id ${current.keyId}, the database's ${inUse}); ${ROTATE_HINT}`,
      );
    }
    if (unproven.length > 0) {
      throw new ConfigError(
        'KEYWARD_OLD_MASTER_KEYS',
        `must also hold the master key with id ${unproven.map((r) => r.key_id).join(', ')}: values are still sealed under it until keyward master-key rotate reports remaining 0`,
      );
    }
    if (!active.some((r) => r.key_id === current.keyId)) await recordKey(store, current, now);
  });
}

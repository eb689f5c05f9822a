/**
 * `keyward master-key rotate` killed with SIGKILL part-way (no chance to clean up), then run again:
 * the second run finishes from where the data says the first one stopped, and every value opens
 * under the new key alone. There is no rotation state besides the values' own key ids.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Vault } from '../../src/primitives/vault.js';
import { aad as idempotencyAad } from '../../src/services/idempotency/idempotency.js';
import { cliEnv, cliJson, newMasterKey, PROJECT_ROOT } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { requestForm } from '../helpers/form-session.js';
import { keyIdOf } from '../helpers/master-key.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const SLOW = 240_000;
const VALUES = 150;

describe.each(ENGINES)('a rotation killed part-way on %s', (engine) => {
  let t: TestApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    ({ t, headers } = await startWithTenant(engine));
  }, SLOW);
  afterAll(() => t?.close(), SLOW);

  it('is finished by the next run', { timeout: SLOW }, async () => {
    // Sealed values under A: idempotency records (each holds its response, with the form URL).
    for (let i = 0; i < VALUES; i += 1) {
      const created = await requestForm(t.app, { ...headers, 'idempotency-key': `crash-${i}` }, 'openai', { externalUserId: `u_${i}` });
      expect(created.statusCode).toBe(201);
    }
    const keyB = newMasterKey();
    const env = cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: keyB, KEYWARD_OLD_MASTER_KEYS: t.masterKey.toString('base64') });
    const underB = Buffer.from(`02${keyIdOf(keyB)}`, 'hex');
    const rows = () => t.ctx.store.db.selectFrom('idempotency_records').select(['server_id', 'idempotency_key', 'response']).execute();
    const resealedCount = async () => (await rows()).filter((r) => Buffer.from(r.response).subarray(0, 9).equals(underB)).length;

    const child = spawn(process.execPath, ['bin/keyward.js', 'master-key', 'rotate', '--batch-size', '1', '--json'], {
      cwd: PROJECT_ROOT,
      env,
      stdio: 'ignore',
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    const deadline = Date.now() + 60_000;
    while ((await resealedCount()) === 0) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error('the rotation never began');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const done = await resealedCount();
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(VALUES);

    expect(await cliJson(env, ['master-key', 'rotate'])).toEqual({ resealed: VALUES - done, remaining: 0 });
    const vaultB = new Vault(Buffer.from(keyB, 'base64'));
    const opened = (await rows()).map((r) => JSON.parse(vaultB.open(r.response, idempotencyAad(r.server_id, r.idempotency_key))) as { externalUserId: string });
    expect(opened.map((o) => o.externalUserId).sort()).toEqual(Array.from({ length: VALUES }, (_, i) => `u_${i}`).sort());
  });
});

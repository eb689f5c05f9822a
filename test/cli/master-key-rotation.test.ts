/**
 * A whole master-key rotation (CONTRACT 4, 5) on a real database, with real processes: data sealed
 * under key A by a node on A (a static credential, an OAuth credential, an OAuth client secret, a
 * pending flow's verifier, an idempotency record); `serve` restarted with B and A as an old key reads
 * it all; `keyward master-key rotate` stopped after one batch, then run to the end while that `serve`
 * answers reads; every sealed column under B's key id; the pending flow finished on B (its verifier
 * and the client secret, resealed, are what the token endpoint checks); a write by the node still on
 * A, once A is retired, refused; then B alone starts and A alone refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, cliJson, newMasterKey, runCli, type ServeProcess, startServe } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { createForm, requestForm } from '../helpers/form-session.js';
import { connectStatic, formPath } from '../helpers/hosted-form.js';
import { expectOneLineRefusal, keyIdOf } from '../helpers/master-key.js';
import { APP_REDIRECT, type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';

const SLOW = 240_000;
// Every sealed column, named here independently of the code's own list (sealed-columns.ts).
const SEALED = [
  ['credentials', 'secret'],
  ['server_providers', 'client_secret'],
  ['oauth_flows', 'verifier'],
  ['idempotency_records', 'response'],
] as const;

describe.each(ENGINES)('a master-key rotation on %s', (engine) => {
  let o: OAuthTenant;
  let keyA: string;
  const keyB = newMasterKey();
  let serveB: ServeProcess | undefined;
  const envOf = (settings: Record<string, string>) =>
    cliEnv({ KEYWARD_DATABASE_URL: o.t.database.url, KEYWARD_PUBLIC_URL: o.t.ctx.publicUrl, KEYWARD_PORT: '0', ...settings });
  beforeAll(async () => {
    // The node on A: the real app in this process, on its own master key.
    o = await startOAuthTenant(engine, { realClock: true, clientAuth: 'post' });
    keyA = o.t.masterKey.toString('base64');
  }, SLOW);
  afterAll(async () => {
    await serveB?.stop();
    await o?.close();
  }, SLOW);

  /** Every value of every sealed column, and the first 9 bytes (layout version and key id) of each. */
  async function sealedValues(): Promise<{ column: string; prefix: string }[]> {
    const values: { column: string; prefix: string }[] = [];
    for (const [table, column] of SEALED) {
      const rows = (await o.t.ctx.store.db.selectFrom(table).select(column).execute()) as Record<string, Uint8Array | null>[];
      for (const row of rows) {
        const value = row[column];
        if (value) values.push({ column: `${table}.${column}`, prefix: Buffer.from(value).subarray(0, 9).toString('hex') });
      }
    }
    return values;
  }
  const prefixOf = (key: string) => `02${keyIdOf(key)}`;

  async function readOnB(externalUserId: string) {
    const response = await fetch(`${serveB!.address}/v1/end-users/${encodeURIComponent(externalUserId)}`, { headers: o.headers });
    expect(response.status, externalUserId).toBe(200);
    return ((await response.json()) as { credentials: Record<string, any>[] }).credentials;
  }

  it('rotates A to B while serve reads, resumes after a stop, and then only B starts', { timeout: SLOW }, async () => {
    // 1. Under A: a static credential, an OAuth credential (the client secret is sealed since setup), a
    //    pending flow, and an idempotency record.
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_static', values: { apiKey: 'sk-proj-STATICunderAabcdefghijklmnop' } });
    const { response: connected } = await o.connect('u_oauth', { redirectUri: APP_REDIRECT });
    expect(connected.statusCode).toBe(303);
    const oauthBefore = await o.read('u_oauth');
    const pending = await o.start({ externalUserId: 'u_pending', redirectUri: APP_REDIRECT });
    const idempotent = { ...o.headers, 'idempotency-key': 'rotation-connect-1' };
    const form = await createForm(o.t.app, idempotent, { externalUserId: 'u_idempotent' });
    const underA = await sealedValues();
    expect(new Set(underA.map((v) => v.column))).toEqual(new Set(SEALED.map(([t, c]) => `${t}.${c}`)));
    expect(new Set(underA.map((v) => v.prefix))).toEqual(new Set([prefixOf(keyA)]));

    // 2. serve restarted with B, A kept for reading: everything reads. B alone is refused while A is in use.
    const envB = envOf({ KEYWARD_MASTER_KEY: keyB, KEYWARD_OLD_MASTER_KEYS: keyA });
    serveB = await startServe(envB);
    expect((await readOnB('u_static'))[0]!.values).toEqual({ apiKey: 'sk-proj-STATICunderAabcdefghijklmnop' });
    expect((await readOnB('u_oauth'))[0]!.accessToken).toBe(oauthBefore.accessToken);
    const replay = await fetch(`${serveB.address}/v1/credentials/static/openai/connect`, {
      method: 'POST',
      headers: { ...idempotent, 'content-type': 'application/json' },
      body: JSON.stringify({ externalUserId: 'u_idempotent' }),
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual(form);
    const bAlone = envOf({ KEYWARD_MASTER_KEY: keyB });
    expectOneLineRefusal(await runCli(bAlone, ['migrate', '--json']), 'KEYWARD_OLD_MASTER_KEYS', [keyA, keyB]);

    // 3. One batch of one value, as a run stopped part-way would leave it; A is still in use.
    const total = underA.length;
    expect(await cliJson(envB, ['master-key', 'rotate', '--batch-size', '1', '--max-batches', '1'])).toEqual({ resealed: 1, remaining: total - 1 });
    const keysTable = () => o.t.ctx.store.db.selectFrom('master_keys').select(['key_id', 'retired_at']).orderBy('created_at').execute();
    expect((await keysTable()).every((k) => k.retired_at === null)).toBe(true);

    // 4. The rest, in batches of 2, while serve answers reads of the values being resealed.
    let rotating = true;
    const reads: number[] = [];
    const reader = (async () => {
      while (rotating) {
        for (const user of ['u_static', 'u_oauth']) {
          const response = await fetch(`${serveB!.address}/v1/end-users/${user}`, { headers: o.headers });
          reads.push(response.status);
          await response.arrayBuffer();
        }
      }
    })();
    const rotated = await cliJson(envB, ['master-key', 'rotate', '--batch-size', '2']).finally(() => {
      rotating = false;
    });
    await reader;
    expect(rotated).toEqual({ resealed: total - 1, remaining: 0 });
    expect(reads.length).toBeGreaterThan(0);
    expect(new Set(reads)).toEqual(new Set([200]));
    const underB = await sealedValues();
    expect(underB.length).toBe(total);
    expect(new Set(underB.map((v) => v.prefix))).toEqual(new Set([prefixOf(keyB)]));
    const keys = await keysTable();
    expect(keys.map((k) => k.key_id)).toEqual([keyIdOf(keyA), keyIdOf(keyB)]);
    expect(keys[0]!.retired_at).not.toBeNull();
    expect(keys[1]!.retired_at).toBeNull();

    // 5. It all reads back on B. The pending flow finishes there: the token endpoint (oidc-provider)
    //    checks the resealed client secret and PKCE verifier.
    expect((await readOnB('u_static'))[0]!.values).toEqual({ apiKey: 'sk-proj-STATICunderAabcdefghijklmnop' });
    expect((await readOnB('u_oauth'))[0]!.accessToken).toBe(oauthBefore.accessToken);
    const back = await o.as.approve(pending.authorizationUrl);
    const callback = await fetch(`${serveB.address}${back.pathname}${back.search}`, { redirect: 'manual' });
    expect(callback.status).toBe(303);
    expect(new URL(callback.headers.get('location')!).searchParams.get('status')).toBe('success');
    const [finished] = await readOnB('u_pending');
    expect(finished).toMatchObject({ provider: PROVIDER, type: 'oauth2', status: 'active' });
    expect(await o.as.isActive(finished!.accessToken)).toBe(true);
    expect(
      formPath(
        (
          await (
            await fetch(`${serveB.address}/v1/credentials/static/openai/connect`, {
              method: 'POST',
              headers: { ...idempotent, 'content-type': 'application/json' },
              body: JSON.stringify({ externalUserId: 'u_idempotent' }),
            })
          ).json()
        ).url,
      ),
    ).toBe(formPath(form.url));

    // 6. The node still on A tries to write after A was retired: refused (issue 17, item 2), so
    //    nothing is left under A for a start without it to lose.
    const late = await requestForm(o.t.app, { ...o.headers, 'idempotency-key': 'late-1' }, 'openai', { externalUserId: 'u_late' });
    expect(late.statusCode).toBe(500);
    expect(o.t.logs.some((line) => line.includes('sealed under a retired master key'))).toBe(true);
    expect(new Set((await sealedValues()).map((v) => v.prefix))).toEqual(new Set([prefixOf(keyB)]));
    expect(await runCli(envB, ['master-key', 'rotate'])).toEqual({
      code: 0,
      stdout: 'Resealed 0 values under the current master key; 0 remain.\nThe old master keys are retired: remove KEYWARD_OLD_MASTER_KEYS from every node.\n',
      stderr: '',
    });

    // 7. Without the old key: B alone starts, A alone is refused with the item-6 line.
    const stopped = await serveB.stop();
    serveB = undefined;
    expect(stopped.code).toBe(0);
    serveB = await startServe(bAlone);
    expect((await readOnB('u_static'))[0]!.values).toEqual({ apiKey: 'sk-proj-STATICunderAabcdefghijklmnop' });
    for (const args of [['serve'], ['master-key', 'rotate', '--json']]) {
      const refused = await runCli(envOf({ KEYWARD_MASTER_KEY: keyA }), args);
      expectOneLineRefusal(refused, 'KEYWARD_MASTER_KEY', [keyA, keyB]);
      expect(refused.stderr).toContain('was retired by keyward master-key rotate');
    }
  });
});

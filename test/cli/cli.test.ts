/**
 * The operator CLI (CONTRACT 4) as a real process on a real database: each command's one JSON object
 * and its effect in storage, the errors, and a key revoked from the CLI while `serve` runs. The
 * provider commands are in provider-cli.test.ts, the listings in listing-cli.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { keyDigest } from '../../src/services/keys/key-format.js';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { addOAuthProviderArgs, cliEnv, cliJson, newMasterKey, runCli, type ServeProcess, startServe } from '../helpers/cli-process.js';
import { ALL_MIGRATIONS, createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';

const SLOW = 180_000;
const ACCOUNT_KEY = /^service_acct_[0-9a-f]{72}$/;
const SERVER_KEY = /^service_srv_[0-9a-f]{72}$/;

const sortedKeys = (value: object) => Object.keys(value).sort();

describe.each(ENGINES)('the operator CLI on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let env: NodeJS.ProcessEnv;
  let accountId: string;
  let serverId: string;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    env = cliEnv({ KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: newMasterKey() });
  });
  afterAll(async () => {
    await store?.close();
    await database.drop();
  });

  it('migrate --json applies the schema once, then reports nothing to apply', { timeout: SLOW }, async () => {
    const first = await cliJson(env, ['migrate']);
    expect(sortedKeys(first)).toEqual(['applied']);
    expect(first.applied).toEqual(ALL_MIGRATIONS);
    expect(await cliJson(env, ['migrate'])).toEqual({ applied: [] });
    store = openStore(parseDatabaseUrl(database.url)!);
  });

  it('account create, server create (both modes), server mode, rotate-key and allow-redirect', { timeout: SLOW }, async () => {
    const account = await cliJson(env, ['account', 'create', '--name', 'Acme Inc', '--email', 'ops@acme.test', '--password', 'correct horse battery']);
    expect(sortedKeys(account)).toEqual(['accountId', 'userId']);
    expect(account.accountId).toMatch(/^acct_[0-9a-z]+$/);
    expect(account.userId).toMatch(/^usr_[0-9a-z]+$/);
    accountId = account.accountId as string;

    const [business, personal] = await Promise.all([
      cliJson(env, ['server', 'create', '--account', accountId, '--name', 'Production']),
      cliJson(env, ['server', 'create', '--account', accountId, '--name', 'Personal', '--mode', 'personal']),
    ]);
    for (const created of [business, personal]) {
      expect(sortedKeys(created)).toEqual(['serverId', 'serverKey']);
      expect(created.serverId).toMatch(/^srv_[0-9a-z]+$/);
      expect(created.serverKey).toMatch(SERVER_KEY);
    }
    serverId = business.serverId as string;
    const modeOf = async (id: unknown) =>
      (
        await store.db
          .selectFrom('servers')
          .select('mode')
          .where('id', '=', id as string)
          .executeTakeFirstOrThrow()
      ).mode;
    expect(await modeOf(serverId)).toBe('business');
    expect(await modeOf(personal.serverId)).toBe('personal');

    expect(await cliJson(env, ['server', 'mode', '--server', personal.serverId as string, '--mode', 'business'])).toEqual({
      serverId: personal.serverId,
      mode: 'business',
    });
    expect(await modeOf(personal.serverId)).toBe('business');

    const rotated = await cliJson(env, ['server', 'rotate-key', '--server', serverId, '--grace-seconds', '120']);
    expect(sortedKeys(rotated)).toEqual(['serverId', 'serverKey']);
    expect(rotated.serverId).toBe(serverId);
    expect(rotated.serverKey).toMatch(SERVER_KEY);
    expect(rotated.serverKey).not.toBe(business.serverKey);
    const serverKeys = await store.db.selectFrom('server_keys').select(['digest', 'created_at', 'expires_at']).where('server_id', '=', serverId).execute();
    const old = serverKeys.find((k) => k.digest === keyDigest(business.serverKey as string));
    const current = serverKeys.find((k) => k.digest === keyDigest(rotated.serverKey as string));
    expect(current?.expires_at).toBeNull();
    const grace = Date.parse(old!.expires_at!) - Date.parse(current!.created_at);
    expect(grace).toBeGreaterThanOrEqual(119_000);
    expect(grace).toBeLessThanOrEqual(120_000);

    const uris = ['https://app.acme.test/keyward/done', 'http://localhost:3000/callback?x=1'];
    expect(await cliJson(env, ['server', 'allow-redirect', '--server', serverId, '--uri', uris[0]!])).toEqual({ serverId, redirectUris: [uris[0]] });
    expect(await cliJson(env, ['server', 'allow-redirect', '--server', serverId, '--uri', uris[1]!])).toEqual({ serverId, redirectUris: uris });
    // Audited as the operator's changes; a URI already on the list is no change and no event.
    expect(await cliJson(env, ['server', 'allow-redirect', '--server', serverId, '--uri', uris[0]!])).toEqual({ serverId, redirectUris: uris });
    const audited = await store.db
      .selectFrom('audit_events')
      .select(['actor', 'detail'])
      .where('server_id', '=', serverId)
      .where('action', '=', 'server.redirect_uri_allowed')
      .execute();
    expect(audited.map((e) => [e.actor, JSON.parse(e.detail).uri]).sort()).toEqual(uris.map((uri) => [CLI_ACTOR, uri]).sort());
  });

  it('key create, key revoke and key list, which shows hints and never a key', { timeout: SLOW }, async () => {
    const [plain, staging] = await Promise.all([
      cliJson(env, ['key', 'create', '--account', accountId, '--label', 'backend']),
      cliJson(env, ['key', 'create', '--account', accountId, '--label', 'ci', '--environment', 'staging', '--expires-at', '2099-01-01T00:00:00Z']),
    ]);
    for (const created of [plain, staging]) {
      expect(sortedKeys(created)).toEqual(['key', 'keyId']);
      expect(created.keyId).toMatch(/^key_[0-9a-z]+$/);
      expect(created.key).toMatch(ACCOUNT_KEY);
    }
    const revoked = await cliJson(env, ['key', 'revoke', '--key', plain.keyId as string]);
    expect(sortedKeys(revoked)).toEqual(['keyId', 'revokedAt']);
    expect(revoked.keyId).toBe(plain.keyId);
    expect(revoked.revokedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const listed = await cliJson(env, ['key', 'list', '--account', accountId]);
    // The parsed object re-serialised holds every string the command printed.
    const printed = JSON.stringify(listed);
    for (const created of [plain, staging]) {
      expect(printed).not.toContain(created.key as string);
      expect(printed).not.toContain((created.key as string).slice('service_acct_'.length, -4));
    }
    expect(printed).not.toMatch(/[0-9a-f]{64}/);
    expect(sortedKeys(listed)).toEqual(['keys']);
    const entries = listed.keys as { id: string; hint: string; label: string; environment: string; expiresAt: string | null; revokedAt: string | null }[];
    expect(entries.map((k) => k.id).sort()).toEqual([plain.keyId, staging.keyId].sort());
    const byId = new Map(entries.map((k) => [k.id, k]));
    expect(byId.get(plain.keyId as string)).toMatchObject({
      label: 'backend',
      environment: 'production',
      hint: `service_acct_…${(plain.key as string).slice(-4)}`,
      expiresAt: null,
      revokedAt: revoked.revokedAt,
    });
    expect(byId.get(staging.keyId as string)).toMatchObject({
      label: 'ci',
      environment: 'staging',
      hint: `service_acct_…${(staging.key as string).slice(-4)}`,
      revokedAt: null,
    });
    expect(Date.parse(byId.get(staging.keyId as string)!.expiresAt!)).toBe(Date.parse('2099-01-01T00:00:00Z'));
  });

  it('errors: nothing on stdout, a message on stderr, exit 1 when refused and 2 on a usage mistake', { timeout: SLOW }, async () => {
    const [unknownAccount, unknownList, missingOption, missingField, badMode, badCreateMode, badTokenAuth, noCommand] = await Promise.all([
      runCli(env, ['server', 'create', '--account', 'acct_doesnotexist', '--name', 'X', '--json']),
      runCli(env, ['key', 'list', '--account', 'acct_doesnotexist', '--json']),
      runCli(env, ['account', 'create', '--email', 'someone@acme.test', '--json']),
      runCli(env, ['provider', 'add-static', '--server', serverId, '--slug', 'no-fields', '--json']),
      runCli(env, ['server', 'mode', '--server', serverId, '--mode', 'weird', '--json']),
      runCli(env, ['server', 'create', '--account', 'acct_doesnotexist', '--name', 'X', '--mode', 'Business', '--json']),
      runCli(env, [...addOAuthProviderArgs(serverId, 'bad-token-auth'), '--token-auth', 'bogus']),
      runCli(env, []),
    ]);
    for (const refused of [unknownAccount, unknownList]) {
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('acct_doesnotexist');
    }
    for (const [usage, option] of [
      [missingOption, '--name'],
      [missingField, '--field'],
      [badMode, '--mode'],
      [badCreateMode, '--mode'],
      [badTokenAuth, '--token-auth'],
      [noCommand, 'a command is needed'],
    ] as const) {
      expect(usage.code).toBe(2);
      expect(usage.stdout).toBe('');
      expect(usage.stderr).toContain(option);
    }
    const servers = await store.db.selectFrom('servers').select('id').where('name', '=', 'X').execute();
    expect(servers).toEqual([]);
  });
});

describe.each(ENGINES)('a key revoked with the CLI while serve runs on %s', (engine) => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let serve: ServeProcess | undefined;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    env = cliEnv({ KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_PORT: '0', KEYWARD_HOST: '127.0.0.1' });
    serve = await startServe(env);
  }, SLOW);
  afterAll(async () => {
    // SIGTERM must end the service on its own; stop() fails the suite if it has to SIGKILL.
    const exit = await serve?.stop();
    await database.drop();
    if (exit && exit.code !== 0) throw new Error(`keyward serve exited with ${exit.code ?? exit.signal} after SIGTERM`);
  }, SLOW);

  it('refuses the account key on the very next request (401 account_key_revoked)', { timeout: SLOW }, async () => {
    const { accountId } = await cliJson(env, ['account', 'create', '--name', 'Live Inc', '--email', 'live@acme.test']);
    const [server, key] = await Promise.all([
      cliJson(env, ['server', 'create', '--account', accountId as string, '--name', 'Production']),
      cliJson(env, ['key', 'create', '--account', accountId as string, '--label', 'backend']),
    ]);
    const headers = { authorization: `Bearer ${key.key as string}`, 'x-service-key': server.serverKey as string };
    const call = () => fetch(`${serve!.address}/v1/end-users`, { headers });

    const before = await call();
    expect(before.status).toBe(200);
    expect(await before.json()).toEqual({ data: [], hasMore: false, nextCursor: null });

    expect(await cliJson(env, ['key', 'revoke', '--key', key.keyId as string])).toMatchObject({ keyId: key.keyId });
    const after = await call();
    expect(after.status).toBe(401);
    expect(after.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const text = await after.text();
    expect(JSON.parse(text).code).toBe('account_key_revoked');
    expect(text).not.toContain(key.key as string);
    expect((await call()).status).toBe(401);
    expect(serve!.lines.join('\n')).not.toContain(key.key as string);
    expect(serve!.lines.join('\n')).not.toContain(server.serverKey as string);
  });

  // SQLite makes its own master key, so this refusal exists only on PostgreSQL.
  if (engine === 'postgres')
    it('will not start on PostgreSQL without KEYWARD_MASTER_KEY', { timeout: SLOW }, async () => {
      const { KEYWARD_MASTER_KEY: _omitted, ...withoutKey } = env;
      const run = await runCli(withoutKey, ['serve']);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('KEYWARD_MASTER_KEY');
    });
});

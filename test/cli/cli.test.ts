/**
 * The operator CLI (CONTRACT 4) as a real process on a real database: each command's one JSON object
 * and its effect in storage, the errors, and a key revoked from the CLI while `serve` runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyDigest } from '../../src/keys/format.js';
import { Vault } from '../../src/services/vault.js';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { cliEnv, cliJson, newMasterKey, runCli, type ServeProcess, startServe } from '../helpers/cli-process.js';
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

  it('provider enable (static and OAuth), provider add-oauth and provider add-static', { timeout: SLOW }, async () => {
    const [openai, github] = await Promise.all([
      cliJson(env, ['provider', 'enable', '--server', serverId, '--provider', 'openai']),
      cliJson(env, [
        'provider',
        'enable',
        '--server',
        serverId,
        '--provider',
        'github',
        '--client-id',
        'Iv1.cli-test',
        '--client-secret',
        'gh-client-secret-cli',
        '--scopes',
        'repo,read:user',
      ]),
    ]);
    expect(openai).toEqual({ serverId, provider: 'openai' });
    expect(github).toEqual({ serverId, provider: 'github' });
    const enabled = await store.db
      .selectFrom('server_providers')
      .selectAll()
      .where('server_id', '=', serverId)
      .where('provider', '=', 'github')
      .executeTakeFirstOrThrow();
    expect(enabled.client_id).toBe('Iv1.cli-test');
    expect(JSON.parse(enabled.scopes!)).toEqual(['repo', 'read:user']);
    expect(Buffer.from(enabled.client_secret!).toString('latin1')).not.toContain('gh-client-secret-cli');

    const [oauth, statik] = await Promise.all([
      cliJson(env, [
        'provider',
        'add-oauth',
        '--server',
        serverId,
        '--slug',
        'acme-oauth',
        '--authorization-url',
        'https://auth.acme.test/authorize',
        '--token-url',
        'https://auth.acme.test/token',
        '--revocation-url',
        'https://auth.acme.test/revoke',
        '--client-id',
        'acme-client',
        '--client-secret',
        'acme-secret-cli',
        '--scopes',
        'read,write',
        '--token-auth',
        'client_secret_post',
      ]),
      cliJson(env, [
        'provider',
        'add-static',
        '--server',
        serverId,
        '--slug',
        'acme-keys',
        '--field',
        'apiKey:API key:secret',
        '--field',
        'region:Region:optional',
        '--field',
        'accountName:Account name',
      ]),
    ]);
    expect(oauth).toEqual({ serverId, provider: 'acme-oauth' });
    expect(statik).toEqual({ serverId, provider: 'acme-keys' });
    const custom = await store.db.selectFrom('custom_providers').select(['slug', 'definition']).where('server_id', '=', serverId).orderBy('slug').execute();
    expect(custom.map((c) => c.slug)).toEqual(['acme-keys', 'acme-oauth']);
    expect(JSON.parse(custom[0]!.definition).fields).toEqual([
      { name: 'apiKey', label: 'API key', secret: true, required: true },
      { name: 'region', label: 'Region', secret: false, required: false },
      { name: 'accountName', label: 'Account name', secret: false, required: true },
    ]);
    expect(JSON.parse(custom[1]!.definition)).toMatchObject({
      kind: 'oauth2',
      tokenUrl: 'https://auth.acme.test/token',
      revocationUrl: 'https://auth.acme.test/revoke',
      defaultScopes: ['read', 'write'],
      tokenEndpointAuth: 'client_secret_post',
    });
    expect(custom[1]!.definition).not.toContain('acme-secret-cli');
  });

  it('provider add-oauth: https only unless KEYWARD_ALLOW_PRIVATE_URLS, no credentials in a URL; the client secret kept only sealed', {
    timeout: SLOW,
  }, async () => {
    const secret = 'local-idp-secret-never-in-plaintext';
    // As in production: private URLs, and plain http with them, refused (test/outbound has every address form).
    const strict = { ...env, KEYWARD_ALLOW_PRIVATE_URLS: 'false' };
    const addOAuth = (slug: string, urls: { authorization?: string; token?: string; revocation?: string }) =>
      runCli(strict, [
        'provider',
        'add-oauth',
        '--server',
        serverId,
        '--slug',
        slug,
        '--authorization-url',
        urls.authorization ?? 'https://auth.acme.test/authorize',
        '--token-url',
        urls.token ?? 'https://auth.acme.test/token',
        ...(urls.revocation ? ['--revocation-url', urls.revocation] : []),
        '--client-id',
        'refused-client',
        '--client-secret',
        secret,
        '--json',
      ]);
    // Client secrets, codes and tokens travel to these URLs: never in clear text in production.
    const notHttps = await Promise.all([
      addOAuth('plain-token', { token: 'http://auth.acme.test/token' }),
      addOAuth('plain-authorize', { authorization: 'http://auth.acme.test/authorize' }),
      addOAuth('plain-revoke', { revocation: 'http://auth.acme.test/revoke' }),
      addOAuth('lookalike', { token: 'http://127.0.0.1.nip.io/token' }),
    ]);
    const withCredentials = await Promise.all([
      addOAuth('userinfo', { token: 'https://user:pass@auth.acme.test/token' }),
      addOAuth('userinfo-loopback', { authorization: 'http://user:pass@127.0.0.1:8080/authorize' }),
    ]);
    for (const [refused, word] of [...notHttps.map((r) => [r, 'https'] as const), ...withCredentials.map((r) => [r, 'credentials'] as const)]) {
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(word);
      expect(refused.stderr).not.toContain(secret);
    }

    // The tests' environment allows private URLs (cliEnv): a provider on this machine, over http.
    const added = await cliJson(env, [
      'provider',
      'add-oauth',
      '--server',
      serverId,
      '--slug',
      'local-idp',
      '--authorization-url',
      'http://127.0.0.1:8080/authorize',
      '--token-url',
      'http://127.0.0.1:8080/token',
      '--revocation-url',
      'http://localhost:8080/revoke',
      '--client-id',
      'local-client',
      '--client-secret',
      secret,
      '--token-auth',
      'client_secret_post',
    ]);
    expect(added).toEqual({ serverId, provider: 'local-idp' });
    const custom = await store.db.selectFrom('custom_providers').select(['slug', 'definition']).where('server_id', '=', serverId).orderBy('slug').execute();
    // Of the refused slugs none was stored.
    expect(custom.map((c) => c.slug)).toEqual(['acme-keys', 'acme-oauth', 'local-idp']);
    expect(JSON.parse(custom[2]!.definition)).toEqual({
      kind: 'oauth2',
      slug: 'local-idp',
      name: 'local-idp',
      authorizationUrl: 'http://127.0.0.1:8080/authorize',
      tokenUrl: 'http://127.0.0.1:8080/token',
      revocationUrl: 'http://localhost:8080/revoke',
      defaultScopes: [],
      scopeSeparator: ' ',
      tokenEndpointAuth: 'client_secret_post',
    });
    expect(custom[2]!.definition).not.toContain(secret);
    const enabled = await store.db.selectFrom('server_providers').selectAll().where('server_id', '=', serverId).orderBy('provider').execute();
    expect(enabled.map((r) => r.provider)).toEqual(['acme-keys', 'acme-oauth', 'github', 'local-idp', 'openai']);
    const row = enabled.find((r) => r.provider === 'local-idp')!;
    expect(row.client_id).toBe('local-client');
    const sealed = Buffer.from(row.client_secret!);
    for (const encoding of ['latin1', 'utf8', 'hex', 'base64'] as const) expect(sealed.toString(encoding)).not.toContain(secret);
    // Sealed with the master key the process was given, bound to this server and slug.
    const vault = new Vault(Buffer.from(env.KEYWARD_MASTER_KEY!, 'base64'));
    expect(vault.open(sealed, `server_providers|${serverId}|local-idp`)).toBe(secret);
    expect(() => vault.open(sealed, `server_providers|${serverId}|acme-oauth`)).toThrow();
  });

  it('provider enable refuses an OAuth provider without its client id and secret, and keeps the client it had', { timeout: SLOW }, async () => {
    const [bare, idOnly, slack] = await Promise.all([
      runCli(env, ['provider', 'enable', '--server', serverId, '--provider', 'github', '--json']),
      runCli(env, ['provider', 'enable', '--server', serverId, '--provider', 'github', '--client-id', 'Iv1.replacement', '--json']),
      runCli(env, ['provider', 'enable', '--server', serverId, '--provider', 'slack', '--client-secret', 'only-a-secret', '--json']),
    ]);
    for (const refused of [bare, idOnly, slack]) {
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('client id and secret');
    }
    const rows = await store.db
      .selectFrom('server_providers')
      .select(['provider', 'client_id'])
      .where('server_id', '=', serverId)
      .where('provider', 'in', ['github', 'slack'])
      .execute();
    // GitHub keeps the client enabled earlier; Slack was never enabled.
    expect(rows).toEqual([{ provider: 'github', client_id: 'Iv1.cli-test' }]);
  });

  it('errors: nothing on stdout, a message on stderr, exit 1 when refused and 2 on a usage mistake', { timeout: SLOW }, async () => {
    const [unknownAccount, unknownList, missingOption, missingField] = await Promise.all([
      runCli(env, ['server', 'create', '--account', 'acct_doesnotexist', '--name', 'X', '--json']),
      runCli(env, ['key', 'list', '--account', 'acct_doesnotexist', '--json']),
      runCli(env, ['account', 'create', '--email', 'someone@acme.test', '--json']),
      runCli(env, ['provider', 'add-static', '--server', serverId, '--slug', 'no-fields', '--json']),
    ]);
    for (const refused of [unknownAccount, unknownList]) {
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('acct_doesnotexist');
    }
    for (const [usage, option] of [
      [missingOption, '--name'],
      [missingField, '--field'],
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

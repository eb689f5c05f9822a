/**
 * The operator CLI's provider commands (CONTRACT 4) as real processes on a real database: `provider
 * enable`, `provider add-oauth` and `provider add-static`, each command's one JSON object and what it
 * stored, its URL rules and its refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Vault } from '../../src/primitives/vault.js';
import { addOAuthProviderArgs, cliJson, runCli } from '../helpers/cli-process.js';
import { type CliTenant, startCliTenant } from '../helpers/cli-tenant.js';
import { ENGINES } from '../helpers/databases.js';

const SLOW = 180_000;

describe.each(ENGINES)('the provider commands of the operator CLI on %s', (engine) => {
  let tenant: CliTenant;
  beforeAll(async () => {
    tenant = await startCliTenant(engine);
  }, SLOW);
  afterAll(() => tenant?.close());

  it('provider enable (static and OAuth), provider add-oauth and provider add-static', { timeout: SLOW }, async () => {
    const [openai, github] = await Promise.all([
      cliJson(tenant.env, ['provider', 'enable', '--server', tenant.serverId, '--provider', 'openai']),
      cliJson(tenant.env, [
        'provider',
        'enable',
        '--server',
        tenant.serverId,
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
    expect(openai).toEqual({ serverId: tenant.serverId, provider: 'openai' });
    expect(github).toEqual({ serverId: tenant.serverId, provider: 'github' });
    const enabled = await tenant.store.db
      .selectFrom('server_providers')
      .selectAll()
      .where('server_id', '=', tenant.serverId)
      .where('provider', '=', 'github')
      .executeTakeFirstOrThrow();
    expect(enabled.client_id).toBe('Iv1.cli-test');
    expect(JSON.parse(enabled.scopes!)).toEqual(['repo', 'read:user']);
    expect(Buffer.from(enabled.client_secret!).toString('latin1')).not.toContain('gh-client-secret-cli');

    const [oauth, statik] = await Promise.all([
      cliJson(tenant.env, [
        'provider',
        'add-oauth',
        '--server',
        tenant.serverId,
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
      cliJson(tenant.env, [
        'provider',
        'add-static',
        '--server',
        tenant.serverId,
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
    expect(oauth).toEqual({ serverId: tenant.serverId, provider: 'acme-oauth' });
    expect(statik).toEqual({ serverId: tenant.serverId, provider: 'acme-keys' });
    const custom = await tenant.store.db
      .selectFrom('custom_providers')
      .select(['slug', 'definition'])
      .where('server_id', '=', tenant.serverId)
      .orderBy('slug')
      .execute();
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
    const strict = { ...tenant.env, KEYWARD_ALLOW_PRIVATE_URLS: 'false' };
    // This test's slugs: the server may hold other tests' providers, which it neither counts nor needs.
    const slugs = ['local-idp'];
    const addOAuth = (slug: string, urls: { authorization?: string; token?: string; revocation?: string }) => {
      slugs.push(slug);
      return runCli(strict, [
        'provider',
        'add-oauth',
        '--server',
        tenant.serverId,
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
    };
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
    const added = await cliJson(tenant.env, [
      'provider',
      'add-oauth',
      '--server',
      tenant.serverId,
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
    expect(added).toEqual({ serverId: tenant.serverId, provider: 'local-idp' });
    const custom = await tenant.store.db
      .selectFrom('custom_providers')
      .select(['slug', 'definition'])
      .where('server_id', '=', tenant.serverId)
      .where('slug', 'in', slugs)
      .execute();
    // Of the refused slugs none was stored.
    expect(custom.map((c) => c.slug)).toEqual(['local-idp']);
    expect(JSON.parse(custom[0]!.definition)).toEqual({
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
    expect(custom[0]!.definition).not.toContain(secret);
    const enabled = await tenant.store.db
      .selectFrom('server_providers')
      .selectAll()
      .where('server_id', '=', tenant.serverId)
      .where('provider', 'in', slugs)
      .execute();
    expect(enabled.map((r) => r.provider)).toEqual(['local-idp']);
    const row = enabled[0]!;
    expect(row.client_id).toBe('local-client');
    const sealed = Buffer.from(row.client_secret!);
    for (const encoding of ['latin1', 'utf8', 'hex', 'base64'] as const) expect(sealed.toString(encoding)).not.toContain(secret);
    // Sealed with the master key the process was given, bound to this server and slug.
    const vault = new Vault(Buffer.from(tenant.env.KEYWARD_MASTER_KEY!, 'base64'));
    expect(vault.open(sealed, `server_providers|${tenant.serverId}|local-idp`)).toBe(secret);
    expect(() => vault.open(sealed, `server_providers|${tenant.serverId}|acme-oauth`)).toThrow();
  });

  it('provider add-static and add-oauth take the provider’s API for the gateway (--api-base-url, --api-host, --auth, --verify), and refuse what cannot be used', {
    timeout: SLOW,
  }, async () => {
    const addStatic = (slug: string, ...flags: string[]) =>
      runCli(tenant.env, [
        'provider',
        'add-static',
        '--server',
        tenant.serverId,
        '--slug',
        slug,
        '--field',
        'accountSid:Account SID',
        '--field',
        'authToken:Auth token:secret',
        ...flags,
        '--json',
      ]);
    const added = await addStatic(
      'acme-gateway',
      '--api-base-url',
      'http://127.0.0.1:4100/api',
      '--api-host',
      '127.0.0.1:4101',
      '--api-host',
      '*.acme.test',
      '--auth',
      'basic:{accountSid}:{authToken}',
      '--verify',
      'GET /Accounts/{accountSid}.json',
    );
    expect(added.code, added.stderr).toBe(0);
    const oauth = await cliJson(tenant.env, [
      'provider',
      'add-oauth',
      '--server',
      tenant.serverId,
      '--slug',
      'acme-oauth-gateway',
      '--authorization-url',
      'https://auth.acme.test/authorize',
      '--token-url',
      'https://auth.acme.test/token',
      '--client-id',
      'acme-client',
      '--client-secret',
      'acme-secret-gateway',
      '--api-base-url',
      'https://api.acme.test/v2',
    ]);
    expect(oauth).toEqual({ serverId: tenant.serverId, provider: 'acme-oauth-gateway' });
    const stored = await tenant.store.db
      .selectFrom('custom_providers')
      .select(['slug', 'definition'])
      .where('server_id', '=', tenant.serverId)
      .where('slug', 'in', ['acme-gateway', 'acme-oauth-gateway'])
      .orderBy('slug')
      .execute();
    expect(stored.map((row) => JSON.parse(row.definition).api)).toEqual([
      {
        apiBaseUrl: 'http://127.0.0.1:4100/api',
        apiHosts: ['127.0.0.1:4101', '*.acme.test'],
        auth: 'basic:{accountSid}:{authToken}',
        verify: 'GET /Accounts/{accountSid}.json',
      },
      { apiBaseUrl: 'https://api.acme.test/v2' },
    ]);

    const strict = { ...tenant.env, KEYWARD_ALLOW_PRIVATE_URLS: 'false' };
    const refusals: [string[], string, NodeJS.ProcessEnv?][] = [
      [['--api-base-url', 'http://api.acme.test', '--auth', 'bearer:authToken'], 'https', strict],
      [['--api-base-url', 'https://10.0.0.5', '--auth', 'bearer:authToken'], 'private', strict],
      [['--api-base-url', 'https://api.acme.test'], 'needs auth'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:token'], 'names no field of the provider: "token"'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'header:Host:{authToken}'], 'Host'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:authToken', '--verify', 'GET /../admin'], 'verify'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:authToken', '--api-host', '*.test'], 'apiHosts'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:authToken', '--api-host', '169.254.169.254'], 'link-local', strict],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:authToken', '--api-host', '*.localhost'], 'this machine', strict],
      [['--auth', 'bearer:authToken'], 'API base URL'],
    ];
    /** `provider add-static` with one secret field and `flags`, as an operator types it. */
    const addWithToken = (slug: string, flags: string[], env = tenant.env) =>
      runCli(env, ['provider', 'add-static', '--server', tenant.serverId, '--slug', slug, '--field', 'authToken:Token:secret', ...flags, '--json']);
    /** Each run exited with `code`, nothing on stdout, and its case's words on stderr. */
    const expectEach = (runs: Awaited<ReturnType<typeof runCli>>[], cases: [string[], string, ...unknown[]][], code: number) => {
      for (const [i, run] of runs.entries()) {
        expect(run.code, run.stderr).toBe(code);
        expect(run.stdout).toBe('');
        expect(run.stderr).toContain(cases[i]![1]);
      }
    };
    expectEach(await Promise.all(refusals.map(([flags, , env], i) => addWithToken(`refused-${i}`, flags, env))), refusals, 1);
    // A value of the wrong shape is malformed: a usage error naming its flag (exit 2, CONTRACT 4).
    const malformed: [string[], string][] = [
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:authToken', '--api-host', 'https://x.acme.test'], '--api-host'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:authToken', '--api-host', 'not a host'], '--api-host'],
      [['--api-base-url=', '--auth', 'bearer:authToken'], '--api-base-url'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'weird:authToken'], '--auth'],
      [['--api-base-url', 'https://api.acme.test', '--auth='], '--auth'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:'], '--auth'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'basic:{authToken}'], '--auth'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'header:X-Token'], '--auth'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'query:a:b:c'], '--auth'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:authToken', '--verify', 'GET v1'], '--verify'],
      [['--api-base-url', 'https://api.acme.test', '--auth', 'bearer:authToken', '--verify', 'get /x'], '--verify'],
      [['--field', 'apiKey'], '--field'],
      [['--field', 'a:B:sekret'], '--field'],
    ];
    expectEach(await Promise.all(malformed.map(([flags], i) => addWithToken(`malformed-${i}`, flags))), malformed, 2);
    // An OAuth provider's credential is its token: it takes no auth or verify (a usage error, exit 2).
    const oauthAuth = await runCli(tenant.env, [
      ...addOAuthProviderArgs(tenant.serverId, 'refused-oauth'),
      '--api-base-url',
      'https://api.acme.test',
      '--auth',
      'bearer:x',
      '--json',
    ]);
    expect(oauthAuth.code).toBe(2);
    expect(oauthAuth.stderr).toContain('--auth');
    const none = await tenant.store.db
      .selectFrom('custom_providers')
      .select('slug')
      .where('server_id', '=', tenant.serverId)
      .where((eb) => eb.or([eb('slug', 'like', 'refused-%'), eb('slug', 'like', 'malformed-%')]))
      .execute();
    expect(none).toEqual([]);
  });

  it('provider enable refuses an OAuth provider without its client id and secret, and keeps the client it had', { timeout: SLOW }, async () => {
    await cliJson(tenant.env, [
      'provider',
      'enable',
      '--server',
      tenant.serverId,
      '--provider',
      'github',
      '--client-id',
      'Iv1.kept',
      '--client-secret',
      'gh-client-secret-kept',
    ]);
    const [bare, idOnly, slack] = await Promise.all([
      runCli(tenant.env, ['provider', 'enable', '--server', tenant.serverId, '--provider', 'github', '--json']),
      runCli(tenant.env, ['provider', 'enable', '--server', tenant.serverId, '--provider', 'github', '--client-id', 'Iv1.replacement', '--json']),
      runCli(tenant.env, ['provider', 'enable', '--server', tenant.serverId, '--provider', 'slack', '--client-secret', 'only-a-secret', '--json']),
    ]);
    for (const refused of [bare, idOnly, slack]) {
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('client id and secret');
    }
    const rows = await tenant.store.db
      .selectFrom('server_providers')
      .select(['provider', 'client_id'])
      .where('server_id', '=', tenant.serverId)
      .where('provider', 'in', ['github', 'slack'])
      .execute();
    // GitHub keeps the client enabled above; Slack was never enabled.
    expect(rows).toEqual([{ provider: 'github', client_id: 'Iv1.kept' }]);
  });
});

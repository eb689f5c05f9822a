/**
 * `keyward server list` and `keyward provider list` (CONTRACT 4) as real processes on a real
 * database: what an operator needs to find a server's id or a provider's slug without SQL, in JSON
 * and as text, never a key or a client secret, and the refusals of an unknown account or server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../../src/catalog/catalog.js';
import { cliEnv, cliJson, newMasterKey, runCli } from '../helpers/cli-process.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';

const SLOW = 180_000;
const CLIENT_SECRETS = ['gh-client-secret-listing', 'acme-client-secret-listing'];

describe.each(ENGINES)('server list and provider list on %s', (engine) => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let accountId: string;
  let production: { serverId: string; serverKey: string };
  let personal: { serverId: string; serverKey: string };
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    env = cliEnv({ KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: newMasterKey() });
    accountId = (await cliJson(env, ['account', 'create', '--name', 'Listing Inc', '--email', 'ops@listing.test'])).accountId as string;
    // One after the other: the list is oldest first, and the two must not share a creation time.
    production = (await cliJson(env, ['server', 'create', '--account', accountId, '--name', 'Production'])) as typeof production;
    personal = (await cliJson(env, ['server', 'create', '--account', accountId, '--name', 'My "own" tools', '--mode', 'personal'])) as typeof personal;
    // Another account's server, which the list must not show.
    const other = (await cliJson(env, ['account', 'create', '--name', 'Other', '--email', 'ops@other.test'])).accountId as string;
    await cliJson(env, ['server', 'create', '--account', other, '--name', 'Not yours']);

    await cliJson(env, ['provider', 'enable', '--server', production.serverId, '--provider', 'openai']);
    await cliJson(env, [
      'provider',
      'enable',
      '--server',
      production.serverId,
      '--provider',
      'github',
      '--client-id',
      'Iv1.listing',
      `--client-secret=${CLIENT_SECRETS[0]}`,
    ]);
    await cliJson(env, [
      'provider',
      'add-oauth',
      '--server',
      production.serverId,
      '--slug',
      'acme-oauth',
      '--name',
      'Acme SSO',
      '--authorization-url',
      'https://auth.acme.test/authorize',
      '--token-url',
      'https://auth.acme.test/token',
      '--client-id',
      'acme-client',
      `--client-secret=${CLIENT_SECRETS[1]}`,
    ]);
    // With an API the gateway can proxy to and a request that checks the key: `proxy` and `checked` in the list.
    await cliJson(env, [
      'provider',
      'add-static',
      '--server',
      production.serverId,
      '--slug',
      'acme-keys',
      '--field',
      'apiKey:API key:secret',
      '--api-base-url',
      'https://api.acme.test',
      '--auth',
      'bearer:apiKey',
      '--verify',
      'GET /v1/me',
    ]);
  }, SLOW);
  afterAll(async () => {
    await database.drop();
  });

  it("server list --json: the account's servers, oldest first, with the current key's hint and never a key", { timeout: SLOW }, async () => {
    const rotated = await cliJson(env, ['server', 'rotate-key', '--server', production.serverId, '--grace-seconds', '600']);
    const listed = await cliJson(env, ['server', 'list', '--account', accountId]);
    expect(Object.keys(listed)).toEqual(['servers']);
    const servers = listed.servers as Record<string, unknown>[];
    expect(servers.map((s) => Object.keys(s).sort())).toEqual([
      ['createdAt', 'id', 'keyHint', 'mode', 'name'],
      ['createdAt', 'id', 'keyHint', 'mode', 'name'],
    ]);
    expect(servers).toMatchObject([
      { id: production.serverId, name: 'Production', mode: 'business', keyHint: `service_srv_…${(rotated.serverKey as string).slice(-4)}` },
      { id: personal.serverId, name: 'My "own" tools', mode: 'personal', keyHint: `service_srv_…${personal.serverKey.slice(-4)}` },
    ]);
    for (const server of servers) expect(server.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(servers[0]!.createdAt as string)).toBeLessThan(Date.parse(servers[1]!.createdAt as string));
    const printed = JSON.stringify(listed);
    for (const key of [production.serverKey, rotated.serverKey as string, personal.serverKey]) {
      expect(printed).not.toContain(key.slice('service_srv_'.length, -4));
    }
  });

  it('server list as text: one line a server, with its id, name, mode and key hint', { timeout: SLOW }, async () => {
    const run = await runCli(env, ['server', 'list', '--account', accountId]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${production.serverId}  "Production"  business  service_srv_…[0-9a-f]{4}  created \\S+Z$`));
    expect(lines[1]).toMatch(new RegExp(`^${personal.serverId}  "My "own" tools"  personal  service_srv_…${personal.serverKey.slice(-4)}  created \\S+Z$`));
  });

  it('provider list --json: the enabled providers first, then the rest of the catalog, whether each can be proxied and checked, and no secret', {
    timeout: SLOW,
  }, async () => {
    const listed = await cliJson(env, ['provider', 'list', '--server', production.serverId]);
    expect(Object.keys(listed)).toEqual(['providers']);
    const providers = listed.providers as { slug: string; name: string; kind: string; custom: boolean; enabled: boolean; proxy: boolean; checked: boolean }[];
    for (const p of providers) expect(Object.keys(p).sort()).toEqual(['checked', 'custom', 'enabled', 'kind', 'name', 'proxy', 'slug']);
    expect(providers.slice(0, 4)).toEqual([
      { slug: 'acme-keys', name: 'acme-keys', kind: 'static', custom: true, enabled: true, proxy: true, checked: true },
      { slug: 'acme-oauth', name: 'Acme SSO', kind: 'oauth2', custom: true, enabled: true, proxy: false, checked: false },
      // An OAuth provider is proxied, never checked: only static credentials have a verify request (CONTRACT 8.3).
      { slug: 'github', name: CATALOG.get('github')!.name, kind: 'oauth2', custom: false, enabled: true, proxy: true, checked: false },
      { slug: 'openai', name: CATALOG.get('openai')!.name, kind: 'static', custom: false, enabled: true, proxy: true, checked: true },
    ]);
    const rest = providers.slice(4);
    expect(rest.map((p) => p.slug)).toEqual([...CATALOG.keys()].filter((s) => s !== 'github' && s !== 'openai').sort());
    for (const p of rest) {
      const entry = CATALOG.get(p.slug)!;
      const checked = entry.kind === 'static' && entry.api?.verify !== undefined;
      expect(p).toEqual({ slug: p.slug, name: entry.name, kind: entry.kind, custom: false, enabled: false, proxy: entry.api !== undefined, checked });
    }
    // The catalog has both kinds of answer: a static provider without a verify request, and one without an API.
    expect(rest.some((p) => p.kind === 'static' && p.proxy && !p.checked)).toBe(true);
    expect(rest.some((p) => !p.proxy)).toBe(true);

    // A server with nothing enabled lists the whole catalog, none enabled.
    const bare = await cliJson(env, ['provider', 'list', '--server', personal.serverId]);
    expect((bare.providers as { enabled: boolean }[]).filter((p) => p.enabled)).toEqual([]);
    expect((bare.providers as unknown[]).length).toBe(CATALOG.size);
  });

  it('provider list as text names each provider, whether it is enabled, proxied and checked, and prints no client secret', { timeout: SLOW }, async () => {
    const [text, json] = await Promise.all([
      runCli(env, ['provider', 'list', '--server', production.serverId]),
      runCli(env, ['provider', 'list', '--server', production.serverId, '--json']),
    ]);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(CATALOG.size + 2);
    expect(lines.slice(0, 3)).toEqual([
      'acme-keys  "acme-keys"  static  custom  enabled  proxy  checked',
      'acme-oauth  "Acme SSO"  oauth2  custom  enabled  no proxy  not checked',
      `github  "${CATALOG.get('github')!.name}"  oauth2  catalog  enabled  proxy  not checked`,
    ]);
    expect(lines.filter((l) => l.includes('  not enabled  '))).toHaveLength(CATALOG.size - 2);
    for (const secret of CLIENT_SECRETS) {
      expect(text.stdout).not.toContain(secret);
      expect(json.stdout).not.toContain(secret);
    }
    expect(json.stdout).not.toMatch(/secret|clientId/i);
  });

  it('an unknown account or server: nothing on stdout, the id on stderr, exit 1; a missing option is a usage mistake (2)', { timeout: SLOW }, async () => {
    const [account, server, accountText, noAccount, noServer] = await Promise.all([
      runCli(env, ['server', 'list', '--account', 'acct_doesnotexist', '--json']),
      runCli(env, ['provider', 'list', '--server', 'srv_doesnotexist', '--json']),
      runCli(env, ['server', 'list', '--account', 'acct_doesnotexist']),
      runCli(env, ['server', 'list', '--json']),
      runCli(env, ['provider', 'list', '--json']),
    ]);
    for (const [refused, id] of [
      [account, 'acct_doesnotexist'],
      [server, 'srv_doesnotexist'],
      [accountText, 'acct_doesnotexist'],
    ] as const) {
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toBe(`keyward: no ${id.startsWith('acct_') ? 'account' : 'server'} ${id}\n`);
    }
    for (const [usage, option] of [
      [noAccount, '--account'],
      [noServer, '--server'],
    ] as const) {
      expect(usage.code).toBe(2);
      expect(usage.stdout).toBe('');
      expect(usage.stderr).toContain(`${option} is required`);
    }
  });
});

/**
 * CONTRACT 3 through the operator CLI, as a real process: `provider add-oauth` with
 * KEYWARD_ALLOW_PRIVATE_URLS=false refuses every private or loopback spelling of a token URL with one
 * line naming the field and the address (exit 1, nothing stored, the client secret never echoed), and
 * with KEYWARD_ALLOW_PRIVATE_URLS=true accepts them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { type CliTenant, startCliTenant } from '../helpers/cli-tenant.js';
import { ENGINES } from '../helpers/databases.js';
import { ALLOW_HINT, REFUSED_TOKEN_URLS } from './refused-urls.js';

const SLOW = 240_000;
const SECRET = 'cli-client-secret-never-echoed-41c2';

/** Runs `items` through `task`, `width` at a time. */
async function inBatches<T, R>(items: T[], width: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width) results.push(...(await Promise.all(items.slice(i, i + width).map((item, j) => task(item, i + j)))));
  return results;
}

describe.each(ENGINES)('provider add-oauth and the outbound URL policy on %s', (engine) => {
  let tenant: CliTenant;
  beforeAll(async () => {
    tenant = await startCliTenant(engine);
  }, SLOW);
  afterAll(() => tenant?.close());

  const addOAuth = (allowPrivate: boolean, slug: string, tokenUrl: string, authorizationUrl = 'https://auth.acme.test/authorize') =>
    runCli({ ...tenant.env, KEYWARD_ALLOW_PRIVATE_URLS: String(allowPrivate) }, [
      'provider',
      'add-oauth',
      '--server',
      tenant.serverId,
      '--slug',
      slug,
      '--authorization-url',
      authorizationUrl,
      '--token-url',
      tokenUrl,
      '--client-id',
      'client',
      '--client-secret',
      SECRET,
      '--json',
    ]);
  const customSlugs = async () => (await tenant.store.db.selectFrom('custom_providers').select('slug').orderBy('slug').execute()).map((r) => r.slug);

  // The URL is refused before anything is read or written, so the second engine runs a sample of the
  // spellings: each is a whole Node process on two shared cores.
  const refusedUrls = engine === 'sqlite' ? REFUSED_TOKEN_URLS : REFUSED_TOKEN_URLS.filter((_, i) => i % 5 === 0);

  it('refuses every private or loopback token URL with KEYWARD_ALLOW_PRIVATE_URLS=false, one line naming the field and the address', {
    timeout: SLOW,
  }, async () => {
    const runs = await inBatches(refusedUrls, 6, ({ url }, i) => addOAuth(false, `refused-${i}`, url));
    refusedUrls.forEach(({ url, because }, i) => {
      const run = runs[i]!;
      expect(run.code, `${url}: ${run.stderr}`).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(`keyward: the token URL ${because}${ALLOW_HINT}\n`);
      expect(run.stderr).not.toContain(SECRET);
    });
    const authorize = await addOAuth(false, 'plain-authorize', 'https://auth.acme.test/token', 'http://auth.acme.test/authorize');
    expect(authorize.stderr).toBe(`keyward: the authorization URL must be https${ALLOW_HINT}\n`);
    expect(await customSlugs()).toEqual([]);
  });

  it('accepts them with KEYWARD_ALLOW_PRIVATE_URLS=true, plain http included', { timeout: SLOW }, async () => {
    const accepted = [
      { url: 'http://127.0.0.1:8080/token', authorization: 'http://localhost:8080/authorize' },
      { url: 'https://169.254.169.254/token', authorization: 'https://auth.acme.test/authorize' },
      { url: 'https://[fd00::1]/token', authorization: 'https://auth.acme.test/authorize' },
    ];
    const runs = await inBatches(accepted, 3, ({ url, authorization }, i) => addOAuth(true, `local-${i}`, url, authorization));
    for (const run of runs) {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ serverId: tenant.serverId });
    }
    expect(await customSlugs()).toEqual(['local-0', 'local-1', 'local-2']);
  });
});

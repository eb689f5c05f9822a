/**
 * The README's SDK snippets, taken from README.md itself (each block after a `<!-- sdk-snippet: … -->`
 * marker), run as they are in the project a customer has: a fresh ES module project and a fresh
 * CommonJS one (what `npm init` makes), each with `keyward` installed (a link to this package, so
 * its export map and compiled dist/ resolve as an install's would), as child node processes against
 * a running Keyward. A snippet that only works in one module system, or an API it calls that
 * changed, fails here instead of in a new user's first minutes.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { keys, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SLOW = 120_000;
const MEMBER = 'auth0|u42';

/** The README's snippets by their marker's name: `<!-- sdk-snippet: esm … -->` then a ```js block. */
function readmeSnippets(): Record<string, string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return Object.fromEntries([...readme.matchAll(/<!-- sdk-snippet: ([a-z]+)[^>]*-->\n```js\n([\s\S]*?)\n```/g)].map((m) => [m[1]!, m[2]!]));
}

/** A fresh project of that module system with keyward installed; returns its folder. */
function project(dir: string, type: 'module' | 'commonjs'): string {
  const folder = join(dir, type);
  mkdirSync(join(folder, 'node_modules'), { recursive: true });
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: `customer-${type}`, version: '1.0.0', type, main: 'index.js' }, null, 2));
  symlinkSync(ROOT, join(folder, 'node_modules', 'keyward'), 'dir');
  return folder;
}

describe("the README's SDK snippets", () => {
  let t: TestApp;
  let tenant: Tenant;
  let env: NodeJS.ProcessEnv;
  const dir = mkdtempSync(join(tmpdir(), 'keyward-readme-sdk-'));
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant('sqlite', {}, { providers: ['openai'] }));
    await enableProvider(t.ctx, { serverId: tenant.serverId, slug: 'github', clientId: 'Iv1.readme', clientSecret: 'readme-client-secret', actor: CLI_ACTOR });
    // The member the snippets read and revoke, with an OpenAI key connected through the hosted form.
    await connectStatic(t.app, keys(tenant), { externalUserId: MEMBER, values: { apiKey: 'sk-proj-readme-openaiopenaiopenaiopenai' } });
    const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    env = { PATH: process.env.PATH, KEYWARD_URL: baseUrl, KEYWARD_ACCOUNT_KEY: tenant.accountKey, KEYWARD_SERVER_KEY: tenant.serverKey };
  }, SLOW);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (folder: string, code: string) => {
    writeFileSync(join(folder, 'index.js'), code);
    return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(process.execPath, ['index.js'], { cwd: folder, env, timeout: 60_000 }, (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      );
    });
  };
  const openaiCredentials = async () => {
    const response = await t.app.inject({ method: 'GET', url: `/v1/end-users/${encodeURIComponent(MEMBER)}`, headers: keys(tenant) });
    return (response.json() as { credentials: { provider: string }[] }).credentials.filter((c) => c.provider === 'openai').length;
  };

  it('the README has one for each module system', () => {
    expect(Object.keys(readmeSnippets()).sort()).toEqual(['commonjs', 'esm']);
  });

  it('the ES module one runs in a "type": "module" project: forms, the audience, a read and a revoke', { timeout: SLOW }, async () => {
    const result = await run(project(dir, 'module'), readmeSnippets().esm!);
    expect(result.code, result.stderr).toBe(0);
    const [links, ...members] = result.stdout.trim().split('\n');
    expect(links).toMatch(/^http:\/\/\S+\/connect\/\S+ https:\/\/github\.com\/login\/oauth\/authorize\?\S+$/);
    expect(members).toEqual([MEMBER]);
    expect(await openaiCredentials()).toBe(0);
  });

  it('the CommonJS one runs in the project npm init makes; the ES module one does not', { timeout: SLOW }, async () => {
    const folder = project(dir, 'commonjs');
    const result = await run(folder, readmeSnippets().commonjs!);
    expect(result.code, result.stderr).toBe(0);
    const [link, ...members] = result.stdout.trim().split('\n');
    expect(link).toMatch(/^http:\/\/\S+\/connect\/\S+$/);
    // The ES module snippet revoked the OpenAI key: the revoke's credential_not_found is caught.
    expect(members).toEqual([MEMBER]);
    // Why there are two: the first is refused where npm init's default holds.
    const esm = await run(folder, readmeSnippets().esm!);
    expect(esm.code).not.toBe(0);
    expect(esm.stderr).toMatch(/Cannot use import statement outside a module|await is only valid/);
  });
});

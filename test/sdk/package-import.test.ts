/**
 * The SDK as a customer installs it: `import … from 'keyward/sdk'` in a plain Node process, resolved
 * through package.json's "exports" to the compiled dist/sdk (built by npm install's prepare, or npm
 * run build), against a running Keyward. And the SDK is a leaf: nothing in it imports the service,
 * so what ships is only what it needs.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** Every module specifier imported or re-exported by a file's source. */
function importsOf(source: string): string[] {
  return [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => (m[1] ?? m[2])!);
}

describe('keyward/sdk from a customer process', () => {
  let t: TestApp;
  let tenant: Tenant;
  let baseUrl: string;
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant('sqlite'));
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => t?.close());

  it('imports the compiled SDK by its package name and drives the running service', async () => {
    expect(existsSync(join(ROOT, 'dist/sdk/index.js')), 'dist/sdk is missing: run npm run build').toBe(true);
    const { stdout } = await run(process.execPath, [join(ROOT, 'test/sdk/fixtures/customer-backend.mjs')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, KEYWARD_URL: baseUrl, KEYWARD_ACCOUNT_KEY: tenant.accountKey, KEYWARD_SERVER_KEY: tenant.serverKey },
    });
    const out = JSON.parse(stdout);
    expect(out.session).toMatchObject({ provider: 'openai', externalUserId: 'customer|1', status: 'pending' });
    expect(out.page).toEqual({ data: [], hasMore: false, nextCursor: null });
    expect(out.missing).toEqual({ isKeywardError: true, status: 404, code: 'end_user_not_found', requestId: expect.stringMatching(/^req_/) });
    expect(out.verifyWebhook).toBe('function');
  });

  // The import above proves `default`; a customer's TypeScript also needs the declarations `types` names.
  it('the export map names files the build made, the declarations included', () => {
    const { types } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports['./sdk'];
    expect(types).toMatch(/\.d\.ts$/);
    expect(existsSync(join(ROOT, types)), types).toBe(true);
  });
});

describe('the SDK is a leaf', () => {
  it('src/sdk imports only its own files and node: built-ins', () => {
    const dir = join(ROOT, 'src/sdk');
    const outside = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) => importsOf(readFileSync(join(dir, name), 'utf8')).map((specifier) => `${name}: ${specifier}`))
      .filter((entry) => !/: (\.\/[a-z-]+\.js|node:[a-z:/]+)$/.test(entry));
    expect(outside).toEqual([]);
  });

  it('the import reader sees what it must refuse', () => {
    const source = "import { a } from '../services/x.js';\nexport { b } from 'undici';\nconst c = await import('pg');\nimport type { D } from './types.js';";
    expect(importsOf(source)).toEqual(['../services/x.js', 'undici', 'pg', './types.js']);
  });
});

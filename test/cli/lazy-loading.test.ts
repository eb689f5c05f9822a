/**
 * What a short CLI command loads, read from the process itself (test/helpers/module-probe.mjs):
 * `key list` runs the compiled dist/ and loads its own group's module, not the server, the pages, the
 * OAuth client, undici, the logger or the sign-in service (whose decoy hash runs scrypt when loaded).
 * An import added in the wrong place would bring a command's start-up back to seconds.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, cliJson, newMasterKey, PROJECT_ROOT } from '../helpers/cli-process.js';

const SLOW = 120_000;
const PROBE = new URL('../helpers/module-probe.mjs', import.meta.url).href;

describe('the CLI loads only what a command needs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keyward-lazy-'));
  const env = cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${join(dir, 'keyward.db')}`, KEYWARD_MASTER_KEY: newMasterKey() });
  let accountId: string;
  beforeAll(async () => {
    accountId = (await cliJson(env, ['account', 'create', '--name', 'Lazy', '--email', 'ops@lazy.test'])).accountId as string;
    await cliJson(env, ['key', 'create', '--account', accountId, '--label', 'backend']);
  }, SLOW);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The project-relative paths of every file the command loaded (node_modules/… for packages). */
  async function loaded(args: string[]): Promise<string[]> {
    const list = join(dir, `${args.join('-')}.modules`);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', PROBE, 'bin/keyward.js', ...args], {
      cwd: PROJECT_ROOT,
      env: { ...env, CLI_MODULE_PROBE_OUT: list },
    });
    expect(stdout).not.toBe('');
    const urls = new Set(
      readFileSync(list, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('file:')),
    );
    return [...urls].map((url) => new URL(url).pathname.slice(new URL(PROJECT_ROOT, 'file:').pathname.length));
  }

  it('key list: the compiled key commands, and no server, pages, OAuth client, undici, logger or scrypt warm-up', { timeout: SLOW }, async () => {
    const files = await loaded(['key', 'list', '--account', accountId, '--json']);
    // The probe saw the command run: its own module, compiled, and the store it read.
    expect(files).toContain('dist/cli/key-commands.js');
    expect(files).toContain('dist/services/keys/account-keys.js');
    expect(files.some((f) => f.startsWith('node_modules/kysely/'))).toBe(true);
    expect(files.filter((f) => f.startsWith('src/') || f.endsWith('.ts'))).toEqual([]);
    const forbidden = [
      'dist/serve.js',
      'dist/app.js',
      'dist/dashboard/',
      'dist/connect/',
      'dist/api/',
      'dist/services/users/sessions.js',
      'dist/services/users/passwords.js',
      'dist/services/oauth/oauth-client.js',
      'dist/outbound/outbound-http.js',
      'dist/cli/webhook-commands.js',
      'node_modules/fastify/',
      'node_modules/oauth4webapi/',
      'node_modules/undici/',
      'node_modules/pino/',
      'node_modules/tsx/',
      'node_modules/esbuild/',
    ];
    for (const prefix of forbidden)
      expect(
        files.filter((f) => f.startsWith(prefix)),
        prefix,
      ).toEqual([]);
  });

  it('--help loads every command group, since the usage lists them all, and still not the server', { timeout: SLOW }, async () => {
    const help = await loaded(['--help']);
    expect(help).toContain('dist/cli/webhook-commands.js');
    expect(help.filter((f) => f === 'dist/serve.js' || f.startsWith('node_modules/fastify/'))).toEqual([]);
  });
});

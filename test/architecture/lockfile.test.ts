/**
 * The lock file is complete: `npm ci` refuses a lock that lacks a package npm would install on some
 * machine (Biome's platform packages for other systems were missing once, which broke `npm ci` and
 * every Docker build). The same check npm makes, offline, on a copy of package.json and the lock.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../helpers/cli-process.js';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'keyward-lock-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `npm ci --dry-run` on a folder holding this package.json and `lock`: npm's own verdict on the pair. */
async function npmCiAccepts(lock: string): Promise<{ ok: boolean; output: string }> {
  const dir = mkdtempSync(join(scratch, 'ci-'));
  copyFileSync(join(PROJECT_ROOT, 'package.json'), join(dir, 'package.json'));
  writeFileSync(join(dir, 'package-lock.json'), lock);
  try {
    const { stdout, stderr } = await run('npm', ['ci', '--dry-run', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], {
      cwd: dir,
      timeout: 60_000,
    });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: stdout + stderr };
  }
}

describe('package-lock.json', () => {
  it('is accepted by npm ci as it is', async () => {
    const verdict = await npmCiAccepts(readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8'));
    expect(verdict.output).not.toMatch(/Missing: .* from lock file/);
    expect(verdict.ok, verdict.output).toBe(true);
  });

  it('would be refused with one platform package of an optional dependency left out (the check can fail)', async () => {
    const lock = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8'));
    const other = Object.keys(lock.packages).find((path) => path.startsWith('node_modules/@biomejs/cli-win32'));
    expect(other, 'the lock names Biome for Windows too').toBeDefined();
    delete lock.packages[other!];
    const verdict = await npmCiAccepts(JSON.stringify(lock, null, 2));
    expect(verdict.ok).toBe(false);
    expect(verdict.output).toMatch(/Missing: @biomejs\/cli-win32-\S+ from lock file/);
  });
});

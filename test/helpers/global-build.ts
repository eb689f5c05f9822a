/**
 * Builds dist/ before the run when it does not match src/ (scripts/build.mjs --if-stale, the same build
 * as `npm run build`, which owns the check: a file of src/ newer than dist/, or a file added or deleted
 * since). The tests that start `keyward serve` or a CLI command run bin/keyward.js, which runs dist/,
 * and must run the code under test, also when vitest is started alone (`npx vitest run test/cli`)
 * after an edit. Type errors do not stop it (`npm test`'s own type-check reports them): a stale dist would.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export default function setup() {
  try {
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: PROJECT_ROOT, stdio: 'pipe' });
  } catch (error) {
    // tsc's errors come on stdout, the script's own failure (a folder it could not replace) on stderr.
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    const output = `${stdout ?? ''}${stderr ?? ''}`;
    process.stderr.write(`the build of dist/ failed or found type errors:\n${output.split('\n').slice(0, 10).join('\n')}\n`);
  }
}

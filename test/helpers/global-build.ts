/**
 * Builds dist/ before the run when any file of src/ is newer than it: the tests that start
 * `keyward serve` or a CLI command run bin/keyward.js, which runs dist/, and must run the code under
 * test, also when vitest is started alone (`npx vitest run test/cli`) after an edit. Type errors do
 * not stop it (tsc emits anyway; `npm test`'s own type-check reports them): a stale dist would.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The newest modification time in a tree, directories included (a moved or removed file changes its folder's). */
function newest(dir: string): number {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function builtAt(): number {
  try {
    return newest(join(PROJECT_ROOT, 'dist'));
  } catch {
    return 0;
  }
}

export default function setup() {
  if (newest(join(PROJECT_ROOT, 'src')) <= builtAt()) return;
  const tsc = join(PROJECT_ROOT, 'node_modules/typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: PROJECT_ROOT, stdio: 'pipe' });
  } catch (error) {
    const output = String((error as { stdout?: Buffer }).stdout ?? '');
    process.stderr.write(`dist/ built from a tree with type errors:\n${output.split('\n').slice(0, 10).join('\n')}\n`);
  }
  execFileSync(process.execPath, ['scripts/copy-assets.mjs'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
}

/**
 * Builds dist/ (scripts/build.mjs, the same build as `npm run build`) before the run when it does not
 * match src/: a file of src/ newer than dist/, or a file added or deleted since (dist/ must hold
 * exactly src/'s files, compiled or copied). The tests that start `keyward serve` or a CLI command run
 * bin/keyward.js, which runs dist/, and must run the code under test, also when vitest is started
 * alone (`npx vitest run test/cli`) after an edit. Type errors do not stop it (`npm test`'s own
 * type-check reports them): a stale dist would.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(PROJECT_ROOT, 'src');
const DIST = join(PROJECT_ROOT, 'dist');

/** Every file under a folder, as paths relative to it; none when the folder is missing. */
function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
  } catch {
    return [];
  }
}

/** dist/ matches src/ when it holds the output of every source file and nothing else, none older than its source. */
function upToDate(): boolean {
  const sources = filesUnder(SRC);
  const built = new Set(filesUnder(DIST).filter((path) => !/\.(d\.ts|d\.ts\.map|js\.map)$/.test(path)));
  const outputs = sources.map((path) => path.replace(/\.ts$/, '.js'));
  if (built.size !== outputs.length || !outputs.every((path) => built.has(path))) return false;
  try {
    return sources.every((path, i) => statSync(join(SRC, path)).mtimeMs <= statSync(join(DIST, outputs[i]!)).mtimeMs);
  } catch {
    // Another run's build swapped dist/ (or a file of src/ went) while we looked: build rather than abort.
    return false;
  }
}

export default function setup() {
  if (upToDate()) return;
  try {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: PROJECT_ROOT, stdio: 'pipe' });
  } catch (error) {
    // tsc's errors come on stdout, the script's own failure (a folder it could not replace) on stderr.
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    const output = `${stdout ?? ''}${stderr ?? ''}`;
    process.stderr.write(`the build of dist/ failed or found type errors:\n${output.split('\n').slice(0, 10).join('\n')}\n`);
  }
}

// The one build, run by `npm run build` (so by `npm install`'s prepare) and by the tests' global setup:
// TypeScript compiles src/ into a fresh folder beside dist/, the files tsc does not compile (the
// stylesheets, the dashboard's script, the icon) are copied beside their neighbours, and the folder
// replaces dist/ by two renames (dist/ aside, the new folder in). A file whose source was deleted
// therefore never outlives it in dist/, and no process ever reads a half-written tree; but between the
// two renames there is an instant with no dist/ at all, and a process started in that instant fails to
// start. That is acceptable for a build on a developer's machine or in CI, not as a way to deploy.
// The new folder sits at dist/'s depth, so the source maps' relative paths to src/ stay right.
// Type errors do not stop the build (tsc emits anyway; a stale dist/ would be worse) but fail it. A
// compile that emitted nothing or not every module (tsc could not start, a broken tsconfig) leaves
// dist/ as it was and fails the build: a tree of stylesheets alone must never replace it.
// With --if-stale (npm install's prepare, the tests' setup) it builds only when dist/ does not match
// src/, so an install of a tree that is already built, or a test run after no edit, costs nothing.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const next = root(`dist.next-${process.pid}`);
const old = root(`dist.old-${process.pid}`);

/** Every file under a folder, as paths relative to it; none when the folder is missing. */
function filesUnder(dir) {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
  } catch {
    return [];
  }
}

/** dist/ matches src/ when it holds the output of every source file and nothing else, none older than its source. */
function upToDate() {
  const sources = filesUnder(root('src'));
  const built = new Set(filesUnder(root('dist')).filter((path) => !/\.(d\.ts|d\.ts\.map|js\.map)$/.test(path)));
  const outputs = sources.map((path) => path.replace(/\.ts$/, '.js'));
  if (built.size !== outputs.length || !outputs.every((path) => built.has(path))) return false;
  try {
    return sources.every((path, i) => statSync(join(root('src'), path)).mtimeMs <= statSync(join(root('dist'), outputs[i])).mtimeMs);
  } catch {
    // Another build swapped dist/ (or a file of src/ went) while we looked: build rather than guess.
    return false;
  }
}

if (process.argv.includes('--if-stale') && upToDate()) process.exit(0);

// A folder left by a killed build whose pid this one reuses would mix its files into ours.
rmSync(next, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [root('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', next], {
  cwd: root(''),
  stdio: 'inherit',
});
cpSync(root('src'), next, { recursive: true, filter: (path) => !path.endsWith('.ts') });

// Every module of src/ must have its .js (the mapping test/helpers/global-build.ts checks too).
const sources = readdirSync(root('src'), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
  .map((entry) => relative(root('src'), join(entry.parentPath, entry.name)));
const missing = sources.filter((path) => !existsSync(join(next, path.replace(/\.ts$/, '.js'))));
if (tsc.error || missing.length > 0) {
  rmSync(next, { recursive: true, force: true });
  const why = tsc.error
    ? `tsc could not run (${tsc.error.message})`
    : `tsc emitted no JavaScript for ${missing.length} of ${sources.length} modules (${missing[0]} first)`;
  process.stderr.write(`build: ${why}; dist/ left as it was\n`);
  process.exit(1);
}

// Another build (a second test run) may swap its own tree in between: retry until ours is in place.
for (;;) {
  rmSync(old, { recursive: true, force: true });
  try {
    renameSync(root('dist'), old);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  try {
    renameSync(next, root('dist'));
    break;
  } catch (error) {
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
  }
}
rmSync(old, { recursive: true, force: true });
process.exitCode = tsc.status ?? 1;

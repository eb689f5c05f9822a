// The one build, run by `npm run build` (so by `npm install`'s prepare) and by the tests' global setup:
// TypeScript compiles src/ into a fresh folder beside dist/, the files tsc does not compile (the
// stylesheets, the dashboard's script, the icon) are copied beside their neighbours, and the folder
// replaces dist/ whole. A file whose source was deleted therefore never outlives it in dist/, and
// a process starting `keyward` meanwhile finds the old tree or the new one, never a half-written one.
// The new folder sits at dist/'s depth, so the source maps' relative paths to src/ stay right.
// Type errors do not stop the build (tsc emits anyway; a stale dist/ would be worse) but fail it.
import { spawnSync } from 'node:child_process';
import { cpSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const next = root(`dist.next-${process.pid}`);
const old = root(`dist.old-${process.pid}`);

const tsc = spawnSync(process.execPath, [root('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', next], {
  cwd: root(''),
  stdio: 'inherit',
});
cpSync(root('src'), next, { recursive: true, filter: (path) => !path.endsWith('.ts') });

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

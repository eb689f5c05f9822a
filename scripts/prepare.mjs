// What `npm install` does after the dependencies are in (npm's prepare script), in this order:
// 1. makes npm's scripts run on a supported Node (scripts/node-runtime.mjs): on a machine whose Node
//    is too old, Node 24 is brought into node_modules and put first on their PATH;
// 2. links this package's own CLI as node_modules/.bin/keyward, so `npx keyward` runs this checkout's
//    bin/keyward.js at once, instead of npm copying the project into its cache and building it there;
// 3. builds dist/ when it does not match src/ (scripts/build.mjs --if-stale).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSupportedNode } from './node-runtime.mjs';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

// The Node npm itself runs on, not the `node` this script was started with: npm's PATH may already
// lead to a Node brought by an earlier install.
const npmNode = process.env.npm_node_execpath;
const npmNodeVersion = npmNode ? spawnSync(npmNode, ['--version'], { encoding: 'utf8' }).stdout.trim() : process.version;
try {
  process.stderr.write(`keyward: ${ensureSupportedNode(projectRoot, npmNodeVersion)}\n`);
} catch (error) {
  process.stderr.write(`keyward: ${error.message}\n`);
  process.exit(1);
}

const bin = join(projectRoot, 'node_modules', '.bin');
mkdirSync(bin, { recursive: true });
rmSync(join(bin, 'keyward'), { force: true });
symlinkSync(join('..', '..', 'bin', 'keyward.js'), join(bin, 'keyward'));

const build = spawnSync(process.execPath, [join(projectRoot, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit' });
process.exit(build.status ?? 1);

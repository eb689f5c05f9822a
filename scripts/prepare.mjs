// What `npm install` does after the dependencies are in (npm's prepare script), in this order:
// 1. makes npm's scripts run on a supported Node (scripts/node-runtime.mjs): on a machine whose Node
//    is too old, Node 24 is brought into node_modules and put first on their PATH;
// 2. builds dist/ when it does not match src/ (scripts/build.mjs --if-stale).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSupportedNode, systemNodeVersion } from './node-runtime.mjs';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

// `npx keyward` in this folder links it into npm's npx cache and runs this script there as well
// (npm_command is then "exec"): the install it runs for is done, so npx changes nothing here.
if (process.env.npm_command === 'exec') process.exit(0);

// The machine's own Node decides, not the `node` this script was started with: npm's PATH may
// already lead to the Node an earlier install brought.
try {
  process.stderr.write(`keyward: ${ensureSupportedNode(projectRoot, systemNodeVersion())}\n`);
} catch (error) {
  process.stderr.write(`keyward: ${error.message}\n`);
  process.exit(1);
}

const build = spawnSync(process.execPath, [join(projectRoot, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit' });
process.exit(build.status ?? 1);

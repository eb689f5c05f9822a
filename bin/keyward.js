#!/usr/bin/env node
// The CLI runs the compiled JavaScript in dist/ (built by `npm run build`, which `npm install` runs),
// on a supported Node (scripts/node-runtime.mjs): started with an older one, it runs itself again on
// the Node that `npm install` brought, or says what it needs. Nothing of dist/ is loaded before that
// check: the SQLite addon would crash an unsupported Node.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { broughtNode, isSupported, MINIMUM_NODE } from '../scripts/node-runtime.mjs';

if (isSupported(process.version)) {
  const { main } = await import('../dist/cli/main.js');
  const code = await main(process.argv.slice(2));
  // -1: a long-running command (serve) that ends on its own signal.
  if (code >= 0) process.exitCode = code;
} else {
  const node = broughtNode(fileURLToPath(new URL('..', import.meta.url)));
  if (!node) {
    process.stderr.write(
      `keyward: Node.js ${MINIMUM_NODE} or newer is needed (this is ${process.version}); install one, or run \`npm install\` in Keyward's folder to bring one\n`,
    );
    process.exit(1);
  }
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  child.on('error', (error) => {
    process.stderr.write(`keyward: could not start ${node}: ${error.message}\n`);
    process.exit(1);
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    // Die of the same signal, as a shell or a supervisor expects: our forwarding handler goes first.
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}

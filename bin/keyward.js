#!/usr/bin/env node
// The CLI runs the compiled JavaScript in dist/ (built by `npm run build`, which `npm install` runs),
// on a supported Node (scripts/node-runtime.mjs): started with an older one, it runs itself again on
// the Node that `npm install` brought, or says what it needs; a command that needs a Node started with
// flags of its own runs itself again the same way. Nothing of dist/ is loaded before that check: the
// SQLite addon would crash an unsupported Node.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { broughtNode, isSupported, MINIMUM_NODE } from '../scripts/node-runtime.mjs';

const args = process.argv.slice(2);
// `audit export` streams a whole trail. On PostgreSQL every chunk is a round trip, and what is alive
// across it makes V8 grow its young generation to its maximum: ~150 MiB more memory at a million
// events for nothing live (bench/RESULTS.md, "The audit trail at a million events"). That size can
// only be set when Node starts, so the command runs on a Node started with a small one: 4 MiB a
// semi-space kept the peak flat at ~120 MiB and took no longer.
const STARTUP_FLAGS = args[0] === 'audit' && args[1] === 'export' ? ['--max-semi-space-size=4'] : [];
const missingFlags = STARTUP_FLAGS.filter((flag) => !process.execArgv.includes(flag));

if (isSupported(process.version) && missingFlags.length === 0) {
  const { main } = await import('../dist/cli/main.js');
  const code = await main(args);
  // -1: a long-running command (serve) that ends on its own signal.
  if (code >= 0) process.exitCode = code;
} else {
  const node = isSupported(process.version) ? process.execPath : broughtNode(fileURLToPath(new URL('..', import.meta.url)));
  if (!node) {
    process.stderr.write(
      `keyward: Node.js ${MINIMUM_NODE} or newer is needed (this is ${process.version}); install one, or run \`npm install\` in Keyward's folder to bring one\n`,
    );
    process.exit(1);
  }
  // On the same Node, the caller's own flags go along (--max-old-space-size, --require…); an old Node's may not apply to the brought one.
  const flags = node === process.execPath ? [...process.execArgv, ...missingFlags] : STARTUP_FLAGS;
  const child = spawn(node, [...flags, fileURLToPath(import.meta.url), ...args], { stdio: 'inherit' });
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

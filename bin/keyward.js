#!/usr/bin/env node
// The CLI runs the compiled JavaScript in dist/ (built by `npm run build`, which `npm install` runs),
// on a supported Node (scripts/node-runtime.mjs): started with an older one, it runs itself again on
// the Node that `npm install` brought, or says what it needs; a command that needs a Node started with
// flags of its own becomes one (below). Nothing of dist/ is loaded before that check: the
// SQLite addon would crash an unsupported Node.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { broughtNode, isSupported, MINIMUM_NODE } from '../scripts/node-runtime.mjs';

const args = process.argv.slice(2);
/**
 * V8 takes the young generation's size only when Node starts, and two commands run better with a
 * small one (4 MiB a semi-space) than with the default, which grows under load to 16 MiB a semi-space
 * on Node 22 and to 64 MiB on Node 24:
 * - `serve`: a proxied body's chunks are freed only when V8 collects the small objects that hold them,
 *   and a young generation grown large collects seldom, so a fast 200 MiB download through the proxy
 *   held up to 52 MiB of chunks already sent; with 4 MiB, 1 to 26 MiB, at the same CPU per call
 *   (bench/RESULTS.md, "A young generation of 4 MiB by default").
 * - `audit export`: on PostgreSQL every chunk is a round trip, and what is alive across it made V8 grow
 *   the young generation to its maximum: ~150 MiB more memory at a million events for nothing live
 *   (bench/RESULTS.md, "The audit trail at a million events"); 4 MiB kept the peak at ~120 MiB and
 *   took no longer.
 * A size the operator chose, on Node's command line or in NODE_OPTIONS, is kept.
 */
const YOUNG_GENERATION = '--max-semi-space-size=4';
const wantsSmallYoungGeneration = args[0] === 'serve' || (args[0] === 'audit' && args[1] === 'export');
const operatorsFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].map((flag) => flag.replaceAll('_', '-'));
const STARTUP_FLAGS = wantsSmallYoungGeneration && !operatorsFlags.some((flag) => flag.startsWith('--max-semi-space-size')) ? [YOUNG_GENERATION] : [];
const missingFlags = STARTUP_FLAGS.filter((flag) => !process.execArgv.includes(flag));
const script = fileURLToPath(import.meta.url);

// On a supported Node, the command becomes a Node started with its flags in this same process
// (execve: same pid, no parent between the service and its supervisor's signals, no second process's
// memory). Not where a parent talks to this process over an IPC channel (fork(), a cluster worker,
// process managers in those modes): Node has already taken the channel's descriptor out of the
// environment, so the new Node would lose it. Nor where execve is missing (Node before 22.15) or
// refused (the permission model): there `serve` runs as it is, since a parent process would cost more
// memory than the small young generation saves, and `audit export` runs as a child.
if (isSupported(process.version) && missingFlags.length > 0 && typeof process.execve === 'function' && process.channel === undefined) {
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...missingFlags, script, ...args], process.env);
  } catch {
    // Refused before anything was replaced: run as below.
  }
}
if (isSupported(process.version) && (missingFlags.length === 0 || args[0] === 'serve')) {
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
  const child = spawn(node, [...flags, script, ...args], { stdio: 'inherit' });
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

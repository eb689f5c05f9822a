// Which Node.js Keyward runs on, and how a machine whose own Node is too old gets one.
//
// Keyward needs Node.js 22.12 or newer: better-sqlite3 13 (a Node-API addon, the first version that
// does not abort on Node 24) needs 22, and the SDK's CommonJS users need require() of ES modules,
// unflagged from 22.12. Node 20 reached its end of life in April 2026. On a machine whose system Node
// is older (many still ship 20), `npm install` brings Node 24 from the npm registry, where the
// node-<platform>-<arch> packages carry the official binaries, into node_modules/.keyward-node, and
// links it as node_modules/.bin/node: npm's scripts (`npm start`, `npm test`, `npx keyward`) put that
// folder first on PATH, so everything they run is on Node 24; bin/keyward.js re-runs itself on it
// when started directly with the old Node. A supported system Node is used as it is.
//
// Plain JavaScript that any Node from 18 on can run: it is what runs on the unsupported one.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MINIMUM_NODE = '22.12.0';
/** The Node brought where the system's is too old: the active LTS, pinned so every install gets the same. */
export const BROUGHT_NODE = '24.21.0';

/** Whether a version ("v22.12.0" or "22.12.0") is one Keyward runs on. */
export function isSupported(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  const [minMajor, minMinor] = MINIMUM_NODE.split('.').map(Number);
  return major > minMajor || (major === minMajor && minor >= minMinor);
}

/** The folder a project's brought Node lives in. */
export function broughtNodeDir(projectRoot) {
  return join(projectRoot, 'node_modules', '.keyward-node');
}

/** The brought Node's executable, or null when this project has none. */
export function broughtNode(projectRoot) {
  const executable = join(broughtNodeDir(projectRoot), process.platform === 'win32' ? 'node.exe' : 'bin/node');
  return existsSync(executable) ? executable : null;
}

/** The npm package that carries a Node binary for this machine, as the Node project publishes them. */
function nodePackage(version) {
  const platform = { linux: 'linux', darwin: 'darwin', win32: 'win' }[process.platform];
  if (!platform || !['x64', 'arm64'].includes(process.arch)) {
    throw new Error(`no Node.js package for ${process.platform}-${process.arch}: install Node.js ${MINIMUM_NODE} or newer`);
  }
  return `node-${platform}-${process.arch}@${version}`;
}

/**
 * Fetches Node `version` from the npm registry into `dir` (replacing what is there). `npm pack`
 * downloads through the user's own npm configuration (registry, proxy, cache), and nothing runs from
 * the package: it is unpacked, not installed.
 */
export function fetchNode(version, dir) {
  const scratch = mkdtempSync(join(tmpdir(), 'keyward-node-'));
  try {
    const packed = spawnSync('npm', ['pack', nodePackage(version), '--pack-destination', scratch, '--json', '--silent'], {
      encoding: 'utf8',
      shell: process.platform === 'win32',
    });
    if (packed.status !== 0) throw new Error(`npm pack ${nodePackage(version)} failed: ${packed.stderr.trim() || packed.stdout.trim()}`);
    const [{ filename }] = JSON.parse(packed.stdout);
    const unpacked = spawnSync('tar', ['-xzf', join(scratch, filename), '-C', scratch], { encoding: 'utf8' });
    if (unpacked.status !== 0) throw new Error(`could not unpack ${filename}: ${unpacked.stderr.trim()}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, '..'), { recursive: true });
    renameSync(join(scratch, 'package'), dir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The version of the machine's own Node: the first `node` on PATH outside any node_modules (npm puts
 * node_modules/.bin first, where our link to the brought Node may already be), or this process's when
 * there is none.
 */
export function systemNodeVersion() {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || dir.split(/[\\/]/).includes('node_modules')) continue;
    const node = join(dir, process.platform === 'win32' ? 'node.exe' : 'node');
    if (!existsSync(node)) continue;
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim();
    if (version) return version;
  }
  return process.version;
}

/**
 * Makes npm's scripts run on a supported Node: with the machine's Node (`systemVersion`) too old,
 * brings BROUGHT_NODE unless it is there already and links it as node_modules/.bin/node; with a
 * supported one, removes a link left by an earlier install so the system's Node is used. Returns what it did.
 */
export function ensureSupportedNode(projectRoot, systemVersion) {
  const link = join(projectRoot, 'node_modules', '.bin', 'node');
  const dir = broughtNodeDir(projectRoot);
  if (isSupported(systemVersion)) {
    if (isOurLink(link, dir)) unlinkSync(link);
    return `Node.js ${systemVersion} is supported; using it`;
  }
  const current = broughtNode(projectRoot);
  const version = current ? spawnSync(current, ['--version'], { encoding: 'utf8' }).stdout.trim() : null;
  if (version !== `v${BROUGHT_NODE}`) fetchNode(BROUGHT_NODE, dir);
  mkdirSync(join(link, '..'), { recursive: true });
  rmSync(link, { force: true });
  symlinkSync(join('..', '.keyward-node', 'bin', 'node'), link);
  return `Node.js ${systemVersion} is past its end of life and too old for Keyward (${MINIMUM_NODE} or newer): npm's scripts here run on Node.js ${BROUGHT_NODE}, brought into node_modules/.keyward-node`;
}

function isOurLink(link, dir) {
  try {
    return lstatSync(link).isSymbolicLink() && join(link, '..', readlinkSync(link)).startsWith(dir);
  } catch {
    return false;
  }
}

// `node scripts/node-runtime.mjs fetch VERSION DIR`: CI's way to a second supported Node (.ci/run).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv[2] === 'fetch') {
  const [version, dir] = process.argv.slice(3);
  if (!version || !dir) {
    process.stderr.write('usage: node scripts/node-runtime.mjs fetch VERSION DIR\n');
    process.exit(2);
  }
  fetchNode(version, resolve(dir));
}

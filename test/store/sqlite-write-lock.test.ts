/**
 * Another process (the CLI beside a running service) may hold SQLite's write lock when a transaction
 * of the service starts. The transaction must wait its turn, not fail with "database is locked".
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createServer } from '../../src/services/servers/servers.js';
import { createTenant, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

/** A second process that writes to the file and keeps its write transaction open for a while. */
const HOLDER = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.pragma('busy_timeout = 5000');
db.exec('BEGIN IMMEDIATE');
db.prepare("UPDATE accounts SET updated_at = ? WHERE id = ?").run(new Date().toISOString(), process.argv[2]);
console.log('holding');
setTimeout(() => { db.exec('COMMIT'); db.close(); }, 400);
`;

describe('SQLite transactions beside another writing process', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { realClock: true });
    tenant = await createTenant(t.ctx);
  });
  afterAll(() => t.close());

  it('wait for the other write transaction and then commit', async () => {
    const holder = spawn(process.execPath, ['-e', HOLDER, t.database.file!, tenant.accountId], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    await new Promise<void>((resolve) => createInterface({ input: holder.stdout! }).once('line', () => resolve()));
    // Reads the account, then writes the server: the pattern a deferred transaction loses.
    const { serverId } = await createServer(t.ctx, { accountId: tenant.accountId, name: 'Second', mode: 'business', actor: CLI_ACTOR });
    expect(await exited).toBe(0);
    const stored = await t.ctx.store.db.selectFrom('servers').select('name').where('id', '=', serverId).executeTakeFirst();
    expect(stored?.name).toBe('Second');
  });
});

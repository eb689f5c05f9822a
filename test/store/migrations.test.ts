import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openStore, parseDatabaseUrl } from '../../src/store/store.js';
import { ALL_MIGRATIONS, createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';

const run = promisify(execFile);
const TABLES = [
  'accounts',
  'account_keys',
  'audience_members',
  'audience_member_tags',
  'audit_events',
  'credentials',
  'custom_providers',
  'idempotency_records',
  'account_users',
  'oauth_flows',
  'server_keys',
  'server_providers',
  'server_redirect_uris',
  'server_branding',
  'servers',
  'static_form_sessions',
  'dashboard_form_uses',
  'sign_in_attempts',
  'rate_limit_windows',
  'webhook_endpoints',
  'webhook_secrets',
  'webhook_messages',
  'webhook_attempts',
  'job_leases',
];

describe.each(ENGINES)('migrations on %s', (engine) => {
  let database: TestDatabase;
  afterEach(() => database.drop());

  it('make every table once and are a no-op when run again', async () => {
    database = await createTestDatabase(engine);
    const store = openStore(parseDatabaseUrl(database.url)!);
    try {
      expect(await migrateToLatest(store)).toEqual(ALL_MIGRATIONS);
      expect(await migrateToLatest(store)).toEqual([]);
      const tables = (await store.db.introspection.getTables()).map((t) => t.name);
      expect(tables).toEqual(expect.arrayContaining(TABLES));
    } finally {
      await store.close();
    }
  });

  it('apply once when two processes start on a new database at the same moment', async () => {
    database = await createTestDatabase(engine);
    const env = { ...process.env, KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: randomBytes(32).toString('base64') };
    const migrate = () => run(process.execPath, ['bin/keyward.js', 'migrate', '--json'], { env });
    const outputs = await Promise.all([migrate(), migrate()]);
    const applied = outputs.flatMap((o) => (JSON.parse(o.stdout) as { applied: string[] }).applied);
    expect(applied).toEqual(ALL_MIGRATIONS);
  });
});

describe('database URLs', () => {
  it('names the engine and the target', () => {
    expect(parseDatabaseUrl('sqlite:.keyward/keyward.db')).toEqual({ engine: 'sqlite', target: '.keyward/keyward.db' });
    expect(parseDatabaseUrl('sqlite:///var/lib/keyward.db')).toEqual({ engine: 'sqlite', target: '/var/lib/keyward.db' });
    expect(parseDatabaseUrl('postgres://u:p@h/db')).toEqual({ engine: 'postgres', target: 'postgres://u:p@h/db' });
    expect(parseDatabaseUrl('postgresql://h/db')?.engine).toBe('postgres');
    expect(parseDatabaseUrl('mysql://h/db')).toBeNull();
    expect(parseDatabaseUrl('sqlite:')).toBeNull();
  });
});

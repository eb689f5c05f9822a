/**
 * An account and a server made the way an operator makes them, through the CLI as real processes, on a
 * fresh database of the engine; plus a store on that database, for tests that check what a command stored.
 */
import { type Engine, openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { cliEnv, cliJson, newMasterKey } from './cli-process.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

export interface CliTenant {
  database: TestDatabase;
  store: Store;
  env: NodeJS.ProcessEnv;
  accountId: string;
  serverId: string;
  close(): Promise<void>;
}

export async function startCliTenant(engine: Engine): Promise<CliTenant> {
  const database = await createTestDatabase(engine);
  const env = cliEnv({ KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: newMasterKey() });
  const { accountId } = (await cliJson(env, ['account', 'create', '--name', 'Acme Inc', '--email', 'ops@acme.test'])) as { accountId: string };
  const { serverId } = (await cliJson(env, ['server', 'create', '--account', accountId, '--name', 'Production'])) as { serverId: string };
  const store = openStore(parseDatabaseUrl(database.url)!);
  return {
    database,
    store,
    env,
    accountId,
    serverId,
    async close() {
      await store.close();
      await database.drop();
    },
  };
}

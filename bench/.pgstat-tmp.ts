import pg from 'pg';
import { startEmbeddedPostgres } from '../test/helpers/embedded-postgres.js';

const server = await startEmbeddedPostgres();
const q = async (text: string) => {
  const c = new pg.Client(server.adminUrl);
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
};
await q("alter system set shared_preload_libraries = 'pg_stat_statements'");
await q('alter system set pg_stat_statements.track_planning = on');
await server.halt();
await server.resume();
await q('create extension pg_stat_statements');
console.log(server.adminUrl);
process.on('SIGTERM', async () => {
  await server.stop();
  process.exit(0);
});
setInterval(() => undefined, 1 << 30);

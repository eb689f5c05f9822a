/**
 * The yardstick: a bare Fastify route on the same machine, no logger. With BARE_DATABASE_URL (a
 * PostgreSQL URL) it also serves GET /hello-db, which makes one `SELECT 1` round trip: PostgreSQL's
 * floor for a route that must ask the database anything.
 */
import Fastify from 'fastify';
import pg from 'pg';

const app = Fastify();
app.get('/hello', async () => ({ hello: 'world' }));
const databaseUrl = process.env.BARE_DATABASE_URL;
if (databaseUrl) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  app.get('/hello-db', async () => {
    await pool.query('select 1');
    return { hello: 'world' };
  });
}
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 4001) });

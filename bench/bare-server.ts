/** The yardstick: a bare Fastify route on the same machine, no logger, no database. */
import Fastify from 'fastify';

const app = Fastify();
app.get('/hello', async () => ({ hello: 'world' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 4001) });

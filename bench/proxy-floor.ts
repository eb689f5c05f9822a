/**
 * The floor of the gateway's proxy (CONTRACT 8.1) for npm run bench:proxy: a Fastify server that does
 * only the work a proxy cannot skip, so that Keyward's CPU per proxied call can be judged against it.
 * It imports nothing from src/ on purpose: it is a yardstick, not a second copy of Keyward.
 *
 * Per request, and nothing else:
 * - Fastify's routing of `/v1/end-users/:externalUserId/proxy/:provider/*` (the same URL as Keyward's),
 *   with no body parser (a body is piped on as it arrives);
 * - one Map lookup of a fixed token by (member, provider): no key is checked, no database read, no
 *   decryption;
 * - the caller's headers copied except the hop-by-hop ones, `host`, `authorization` and
 *   `x-service-key`, with `authorization: Bearer <token>` set;
 * - one undici request to the upstream (an Agent, keep-alive connections, as Keyward's outbound
 *   client), and its answer streamed back with its status and headers (hop-by-hop ones left out).
 *
 * No logger. FLOOR_UPSTREAM_URL (http://127.0.0.1:<port>), FLOOR_MEMBER, FLOOR_PROVIDER, FLOOR_TOKEN, PORT;
 * FLOOR_AUDIENCE_PREFIX and FLOOR_AUDIENCE_SIZE (bench/proxy-audience.ts): the token also for members
 * <prefix>1 … <prefix><size>.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import Fastify from 'fastify';
import { Agent, type Dispatcher } from 'undici';

const upstream = new URL(process.env.FLOOR_UPSTREAM_URL ?? '');
const tokens = new Map([[`${process.env.FLOOR_MEMBER}\u0000${process.env.FLOOR_PROVIDER}`, process.env.FLOOR_TOKEN ?? '']]);
for (let n = 1; n <= Number(process.env.FLOOR_AUDIENCE_SIZE ?? 0); n += 1) {
  tokens.set(`${process.env.FLOOR_AUDIENCE_PREFIX}${n}\u0000${process.env.FLOOR_PROVIDER}`, process.env.FLOOR_TOKEN ?? '');
}
const agent = new Agent();

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const NOT_FORWARDED = new Set([...HOP_BY_HOP, 'host', 'authorization', 'x-service-key']);
/** `/v1/end-users/{id}/proxy/{provider}` is 6 segments after the leading empty one: the path is what follows. */
const SEGMENTS_BEFORE_PATH = 6;

function requestHeaders(incoming: IncomingHttpHeaders, token: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value !== undefined && !NOT_FORWARDED.has(name)) out[name] = value;
  }
  out.authorization = `Bearer ${token}`;
  return out;
}

function answerHeaders(incoming: Dispatcher.ResponseData['headers']): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

const app = Fastify();
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', (_request, _payload, done) => done(null));
app.get('/ready', async () => ({ ready: true }));
app.route<{ Params: { externalUserId: string; provider: string } }>({
  method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
  url: '/v1/end-users/:externalUserId/proxy/:provider/*',
  handler: async (request, reply) => {
    const token = tokens.get(`${request.params.externalUserId}\u0000${request.params.provider}`);
    if (token === undefined) return reply.code(404).send({ error: 'no credential' });
    const question = request.url.indexOf('?');
    const rawPath = (question < 0 ? request.url : request.url.slice(0, question)).split('/').slice(SEGMENTS_BEFORE_PATH).join('/');
    const { headers } = request.raw;
    const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    const aborted = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) aborted.abort();
    });
    const answer = await agent.request({
      origin: upstream.origin,
      path: `/${rawPath}${question < 0 ? '' : request.url.slice(question)}`,
      method: request.method as Dispatcher.HttpMethod,
      headers: requestHeaders(headers, token),
      body: hasBody ? request.raw : null,
      signal: aborted.signal,
    });
    reply.code(answer.statusCode).headers(answerHeaders(answer.headers));
    return reply.send(answer.body);
  },
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 4003) });
// A clean exit on SIGTERM, so that --cpu-prof writes its profile (the default action would not).
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));

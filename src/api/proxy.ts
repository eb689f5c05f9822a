/**
 * `GET|POST|PUT|PATCH|DELETE /v1/end-users/{externalUserId}/proxy/{provider}/{path}` (CONTRACT 8.1):
 * the member's credential used on the provider's API, the caller never holding it. Behind the same
 * guard and rate limit as every /v1 route; the handler's one read (the member, its credential of the
 * provider, a custom provider's definition) returns the auth version, as the member read of
 * GET /v1/end-users/{id} does, so the keys are confirmed by it before anything is called.
 *
 * Bodies stream both ways: this route has no body parser (the caller's body is piped to the provider
 * through a limit), and the answer is passed on as the caller reads it. What Keyward itself refuses is
 * problem+json without `keyward-upstream`; everything the provider says is passed on with it.
 */
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { countHeader } from '../auth/guard.js';
import type { ServiceContext } from '../services/context.js';
import { keywardKeyCarried } from '../services/gateway/proxy-headers.js';
import type { ByteCount } from '../services/gateway/read-ahead.js';
import { observedProvider } from '../services/observer.js';
import { prepareProxyCall, readForProxy } from '../services/proxy/proxy-call.js';
import { Problem } from '../web/problem.js';
import { proxiedTarget } from '../web/proxy-paths.js';
import { requestLineFields } from '../web/request-line.js';
import { type ApiInstance, authOf } from './api-instance.js';
import type { GuardHook } from './guard-hook.js';
import { type BodyLimit, declaredLength, discardUnusedBody, hasBody, limitedBody, setTypeAside, takeTypeBack } from './proxy-body.js';
import { ExternalUserId, GUARD_STATUSES, ProviderSlug, problemResponses } from './schemas.js';

/** The gateway's limits on one node (KEYWARD_PROXY_MAX_BODY_MB, _TIMEOUT_SECONDS, _MAX_IN_FLIGHT). */
export interface ProxyLimits {
  maxBodyBytes: number;
  timeoutMs: number;
  maxInFlight: number;
}

export const DEFAULT_PROXY_LIMITS: ProxyLimits = { maxBodyBytes: 10 * 1024 * 1024, timeoutMs: 30_000, maxInFlight: 256 };

/**
 * How long a provider's answer may pause between two chunks once it started: long, since the contract
 * bounds only the start (an event stream may idle between events), yet bounded, so that a provider
 * that stalls mid-answer does not hold a slot for ever.
 */
export const ANSWER_IDLE_MS = 5 * 60_000;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The gateway's route below /v1, without its trailing path. */
export const PROXY_ROUTE = '/end-users/:externalUserId/proxy/:provider';

/** The status class a metric is labelled with: `2xx` … `5xx`, or `aborted` where the caller went away first. */
const statusClass = (status: number, finished: boolean) => (finished ? `${Math.floor(status / 100)}xx` : 'aborted');

export function registerProxy(app: ApiInstance, ctx: ServiceContext, guard: GuardHook, limits: ProxyLimits) {
  let inFlight = 0;
  const tooLarge = () =>
    new Problem('payload_too_large', `The request body is over ${limits.maxBodyBytes / (1024 * 1024)} MiB, the most the gateway forwards.`);

  const handler = async (request: FastifyRequest<{ Params: { externalUserId: string; provider: string } }>, reply: FastifyReply) => {
    takeTypeBack(request.raw);
    const { provider } = request.params;
    // A call refused as busy is a call too: logged and counted as any other (CONTRACT 8.1, Records).
    const busy = inFlight >= limits.maxInFlight;
    if (!busy) inFlight++;
    const started = performance.now();
    const caller = new AbortController();
    const received: ByteCount = { bytes: 0 };
    let body: BodyLimit | null = null;
    let upstream = '';
    request.writesOwnLogLine = true;
    reply.raw.once('close', () => {
      if (!busy) inFlight--;
      const finished = reply.raw.writableFinished;
      // The caller went away before the answer ended: the provider's request (or answer) is closed too.
      if (!finished) caller.abort();
      // Where the caller went away before any answer, there is no status to record (200 is only Node's default).
      const status = reply.raw.headersSent ? reply.statusCode : null;
      const seconds = (performance.now() - started) / 1000;
      ctx.observer?.proxyCall(observedProvider(ctx.catalog, provider), statusClass(reply.statusCode, finished), seconds);
      // The request's one line, in place of app.ts's: its fields (ms on Fastify's clock, which started
      // before the guard), then the call's. Never the path, its query, a header value or a body: they
      // carry the end user's data. Through the root logger with request.log's binding first, as
      // app.ts's line: no child made for it.
      app.log.info(
        {
          ...requestLineFields(request, reply, status),
          proxy: { provider, upstream, ...(finished ? {} : { aborted: true }), bytesIn: body?.bytes ?? 0, bytesOut: received.bytes },
        },
        'request',
      );
    });
    if (busy) {
      throw new Problem('proxy_busy', `This node has ${limits.maxInFlight} proxied calls in flight. Retry in a second.`, { headers: { 'retry-after': '1' } });
    }

    const read = await readForProxy(ctx, authOf(request).serverId, request.params.externalUserId, provider);
    await guard.confirm(request, read.found.authVersion);
    const declared = declaredLength(request.raw);
    if (declared !== null && declared > limits.maxBodyBytes) {
      discardUnusedBody(request.raw, reply.raw);
      throw tooLarge();
    }
    const pickedBaseUrl = request.headers['keyward-base-url'] as string | undefined;
    // Sent twice, Node joins the values into one, which may still parse as a URL: which was meant is not Keyward's to guess.
    if (pickedBaseUrl !== undefined && countHeader(request.raw.rawHeaders, 'keyward-base-url') > 1) {
      throw new Problem('proxy_target_not_allowed', 'keyward-base-url is sent more than once.');
    }
    // The route matched on the path; a target in absolute form (`http://host/v1/…`) has none to read it from.
    const target = proxiedTarget(request.url);
    if (target === null) throw new Problem('proxy_target_not_allowed', 'The request target must be a path (origin form), not an absolute URL.');
    const carried = keywardKeyCarried(request.headers, target.rawPath, target.rawQuery);
    if (carried !== null) {
      throw new Problem('validation_failed', 'A Keyward key never goes to a provider: send it only in Authorization and x-service-key.', {
        errors: [{ path: carried, message: 'carries a Keyward key (service_acct_… or service_srv_…)' }],
      });
    }
    const call = await prepareProxyCall(ctx, read, { provider, ...target, pickedBaseUrl });
    body = hasBody(request.raw) ? limitedBody(request.raw, limits.maxBodyBytes) : null;
    try {
      const answer = await call.send(request.method, request.headers, body, request.id, {
        timeouts: { headersMs: limits.timeoutMs, bodyMs: ANSWER_IDLE_MS },
        signal: caller.signal,
        received,
      });
      upstream = answer.upstreamHost;
      reply.code(answer.status).headers(answer.headers);
      if (!('whole' in answer.body)) return reply.send(answer.body.stream);
      const { whole } = answer.body;
      // Fastify gives a Buffer without a type `application/octet-stream`, and a 304 its length of 0; a
      // stream it sends as it is. The provider's answer goes on unchanged (CONTRACT 8.1).
      const asItIs = answer.headers['content-type'] === undefined || answer.status === 304;
      return reply.send(asItIs ? Readable.from([whole]) : whole);
    } catch (error) {
      // The rest of a body the provider will not get is read and thrown away, so that the answer reaches
      // the caller and its connection can carry the next request.
      if (body !== null && !request.raw.complete) discardUnusedBody(request.raw, reply.raw);
      if (body?.exceeded) throw tooLarge();
      // The caller went away (its connection closed, the call aborted with it): nobody is left to
      // answer, and nothing went wrong here; the request's line above says it was aborted.
      if (caller.signal.aborted) return reply.hijack();
      throw error;
    }
  };

  const url = PROXY_ROUTE;
  guard.leaveVersionToHandler(`${app.prefix}${url}`, METHODS);
  guard.leaveVersionToHandler(`${app.prefix}${url}/*`, METHODS);
  app.register(async (scope) => {
    // Every body, of any type, is the provider's: nothing here parses it (the handler pipes it on).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.addHook('onRequest', (request, _reply, done) => {
      setTypeAside(request.raw);
      done();
    });
    const schema = {
      summary: "Call the provider's API with an end user's credential",
      description:
        "Keyward calls `{apiBaseUrl}/{path}?{query}` with the member's active credential of `{provider}` and streams the answer back unchanged, with `keyward-upstream`. Request and answer bodies are the provider's.",
      tags: ['gateway'],
      params: Type.Object({ externalUserId: ExternalUserId, provider: ProviderSlug }),
      response: problemResponses(...GUARD_STATUSES, 409, 413, 422, 502, 504),
    };
    // Documented once, with its path named (app.ts's OpenAPI transform); the route without a path is the same call on the base URL.
    scope.route({ method: [...METHODS], url, exposeHeadRoute: false, schema: { ...schema, hide: true }, handler });
    scope.route({ method: [...METHODS], url: `${url}/*`, exposeHeadRoute: false, schema, handler });
  });
}

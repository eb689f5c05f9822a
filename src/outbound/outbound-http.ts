/**
 * Every HTTP request Keyward itself makes goes through here (provider token and revocation endpoints
 * now, webhook endpoints later), so the policy of CONTRACT 3 holds in one place:
 * - the URL is checked again at call time (scheme, IP literal, localhost), since a URL stored while
 *   KEYWARD_ALLOW_PRIVATE_URLS was true may be called by a node where it is not;
 * - a name is resolved once, by the socket's own lookup: every address it resolves to is checked and the
 *   socket connects to those checked addresses, so no second lookup can swap in another one between
 *   check and connect (DNS rebinding). TLS still verifies the certificate for the name;
 * - redirects are never followed (a 3xx is a failed call: a public endpoint could redirect inward);
 * - the response body is read as it streams and refused past a cap, so a hostile endpoint cannot make
 *   the process buffer what it likes.
 */

import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher, fetch as undiciFetch } from 'undici';
import { nonPublicAddress, outboundUrlRefusal } from './address-policy.js';

export const MAX_RESPONSE_BYTES = 1024 * 1024;

/** The User-Agent of Keyward's own calls to a provider's API (a check, a revocation through it): GitHub's asks that it name the application. */
export const KEYWARD_USER_AGENT = 'Keyward';

/** Resolves a name to all its addresses; `dns.lookup` in production, a table in tests. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * A call that failed before it produced a usable answer. `refused`: the policy forbade the address (no
 * request was sent); `redirect`: the endpoint answered a 3xx; `too_large`: the body passed the cap;
 * `timeout` and `network`: the endpoint did not answer in time, or could not be reached.
 */
export class OutboundError extends Error {
  constructor(
    readonly kind: 'refused' | 'redirect' | 'too_large' | 'timeout' | 'network',
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundOptions {
  /** KEYWARD_ALLOW_PRIVATE_URLS: loopback and private addresses, and http:, allowed. */
  allowPrivateUrls: boolean;
  /** How long a whole call (connect, answer and body) may take. */
  timeoutMs: number;
  resolve?: Resolver;
  maxResponseBytes?: number;
}

/** A request whose answer is wanted only as its status and headers (a webhook delivery). */
export interface OutboundPost {
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
}

/** The status and headers of an answer to an OutboundPost; its body was read (at most the cap) and dropped. */
export interface OutboundAnswer {
  status: number;
  /** A header's value, or null where absent (repeated values joined by ", ", as Headers.get). */
  header(name: string): string | null;
}

/**
 * A call whose answer streams back to whoever asked (the gateway, CONTRACT 8.1): any method, the body
 * sent as it arrives, the answer's body handed over unread and uncapped (the caller reads or destroys it).
 */
export interface OutboundStreamRequest {
  method: string;
  headers: OutgoingHttpHeaders;
  body: Readable | Buffer | null;
  signal?: AbortSignal;
  /** How long the endpoint may take to start answering once the request is sent. */
  headersTimeoutMs: number;
  /** How long the answer's body may pause between two chunks. */
  bodyTimeoutMs: number;
}

export interface OutboundStreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

export interface OutboundHttp {
  readonly allowPrivateUrls: boolean;
  /** fetch() under the policy; answers a global Response whose body is already read (at most the cap). */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /**
   * A POST under the same policy as fetch (the URL checked at call time, the pinned and checked
   * lookup, no redirect followed, the body cap, the timeout), through undici's request() rather than
   * fetch(): no WHATWG Request, Headers, Response or web stream per call, which cost a webhook
   * delivery about a quarter of its CPU.
   */
  post(url: string, request: OutboundPost): Promise<OutboundAnswer>;
  /** A streamed call under the same policy (checked at call time, the pinned lookup, no redirect followed), with no cap on the answer. */
  stream(url: URL, request: OutboundStreamRequest): Promise<OutboundStreamAnswer>;
  close(): Promise<void>;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The socket's lookup: resolve once, check every address, hand the checked ones to the socket. */
function pinnedLookup(resolve: Resolver, allowPrivateUrls: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname)
      .then((found) => {
        // The message names neither the name nor what it resolved to: it can reach an API caller
        // (refresh_failed), who must not learn the internal network's DNS from it.
        if (!allowPrivateUrls && found.some(({ address }) => nonPublicAddress(address) !== null)) {
          throw new OutboundError('refused', 'the endpoint resolves to an address that is not public');
        }
        const usable = options.family ? found.filter((a) => a.family === options.family) : found;
        const first = usable[0];
        if (!first) throw new OutboundError('network', `${hostname} has no address`);
        if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, ''));
  };
}

/** Reads a body chunk by chunk and gives up (closing the connection) as soon as it passes `max` bytes. */
async function readCapped(body: ReadableStream<Uint8Array> | null, max: number): Promise<ArrayBuffer | null> {
  if (!body) return null;
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new OutboundError('too_large', `the response body passed ${max} bytes`);
    }
    chunks.push(value);
  }
  const whole = Buffer.concat(chunks);
  return whole.buffer.slice(whole.byteOffset, whole.byteOffset + whole.byteLength) as ArrayBuffer;
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** What went wrong, as one of OutboundError's kinds; undici wraps a lookup's error as the cause of "fetch failed". */
function outboundError(error: unknown): OutboundError {
  if (error instanceof OutboundError) return error;
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof OutboundError) return cause;
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') return new OutboundError('timeout', 'the endpoint did not answer in time');
  return new OutboundError('network', 'the endpoint could not be reached');
}

/** Closes a request() body unread (and its connection); the abort it emits is expected, not an error. */
export function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Drains a request() body, giving up (and closing the connection) as soon as it passes `max` bytes. */
async function drainCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<void> {
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).byteLength;
    if (size > max) {
      discard(body);
      throw new OutboundError('too_large', `the response body passed ${max} bytes`);
    }
  }
}

/** A header of request()'s answer (an array where repeated), as Headers.get gives it: repeated values joined by ", ". */
function headerOf(headers: Dispatcher.ResponseData['headers'], name: string): string | null {
  const value = headers[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

export function createOutbound(options: OutboundOptions): OutboundHttp {
  const max = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const agent = new Agent({
    connect: { lookup: pinnedLookup(options.resolve ?? systemResolver, options.allowPrivateUrls), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });

  /** The address policy, on every call (the pinned lookup checks again what the name resolves to). */
  const refuseUrl = (url: string | URL) => {
    const refusal = outboundUrlRefusal(url, options.allowPrivateUrls);
    if (refusal) throw new OutboundError('refused', `the URL ${refusal.reason}`);
  };

  /** A redirect is not followed, and a body declared over the cap is not read: the same rules for fetch and post. */
  const refusalOfAnswer = (status: number, contentLength: string | null): OutboundError | null => {
    if (status >= 300 && status < 400) return new OutboundError('redirect', `the endpoint answered ${status}, a redirect, which is not followed`);
    const declared = Number(contentLength);
    if (Number.isFinite(declared) && declared > max) return new OutboundError('too_large', `the response body declares ${declared} bytes, over ${max}`);
    return null;
  };

  async function call(url: string, init: RequestInit = {}): Promise<Response> {
    refuseUrl(url);
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const answer = await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      redirect: 'manual',
      signal,
      dispatcher: agent,
    });
    const answerRefusal = refusalOfAnswer(answer.status, answer.headers.get('content-length'));
    if (answerRefusal) {
      await answer.body?.cancel().catch(() => undefined);
      throw answerRefusal;
    }
    const body = await readCapped(answer.body as ReadableStream<Uint8Array> | null, max);
    // The body is decoded now: its length and encoding headers no longer describe it.
    const headers = new Headers();
    for (const [name, value] of answer.headers) {
      if (name !== 'content-length' && name !== 'content-encoding') headers.append(name, value);
    }
    const noBody = answer.status === 204 || answer.status === 205;
    return new Response(noBody ? null : body, { status: answer.status, statusText: answer.statusText, headers });
  }

  async function post(url: string, request: OutboundPost): Promise<OutboundAnswer> {
    refuseUrl(url);
    // The whole call's bound, as fetch's AbortSignal.timeout, without making a signal per call.
    const bound = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      bound.abort();
    }, options.timeoutMs);
    const abort = () => bound.abort();
    request.signal?.addEventListener('abort', abort, { once: true });
    if (request.signal?.aborted) bound.abort();
    try {
      const target = new URL(url);
      const answer = await agent.request({
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: bound.signal,
      });
      const answerRefusal = refusalOfAnswer(answer.statusCode, headerOf(answer.headers, 'content-length'));
      if (answerRefusal) {
        discard(answer.body);
        throw answerRefusal;
      }
      await drainCapped(answer.body, max);
      return { status: answer.statusCode, header: (name) => headerOf(answer.headers, name) };
    } catch (error) {
      if (error instanceof OutboundError) throw error;
      // The whole call's bound, the caller's abort (the dispatcher stopping: it tells that case apart
      // itself), or undici's own connect/headers/body timeouts, which share the bound's milliseconds.
      if (timedOut || request.signal?.aborted || UNDICI_TIMEOUTS.has((error as { code?: string }).code ?? '')) {
        throw new OutboundError('timeout', 'the endpoint did not answer in time');
      }
      throw outboundError(error);
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', abort);
    }
  }

  async function stream(url: URL, request: OutboundStreamRequest): Promise<OutboundStreamAnswer> {
    refuseUrl(url);
    try {
      const answer = await agent.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: request.method as Dispatcher.HttpMethod,
        headers: request.headers as Record<string, string | string[]>,
        body: request.body,
        signal: request.signal,
        headersTimeout: request.headersTimeoutMs,
        bodyTimeout: request.bodyTimeoutMs,
      });
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    } catch (error) {
      if (UNDICI_TIMEOUTS.has((error as { code?: string }).code ?? '')) throw new OutboundError('timeout', 'the endpoint did not answer in time');
      throw outboundError(error);
    }
  }

  return {
    allowPrivateUrls: options.allowPrivateUrls,
    post,
    stream,
    async fetch(url, init) {
      try {
        return await call(url, init);
      } catch (error) {
        throw outboundError(error);
      }
    },
    close: () => agent.close(),
  };
}

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
import { Agent, fetch as undiciFetch } from 'undici';
import { nonPublicAddress, outboundUrlRefusal } from './address-policy.js';

export const MAX_RESPONSE_BYTES = 1024 * 1024;

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

export interface OutboundHttp {
  readonly allowPrivateUrls: boolean;
  /** fetch() under the policy; answers a global Response whose body is already read (at most the cap). */
  fetch(url: string, init?: RequestInit): Promise<Response>;
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

/** What went wrong, as one of OutboundError's kinds; undici wraps a lookup's error as the cause of "fetch failed". */
function outboundError(error: unknown): OutboundError {
  if (error instanceof OutboundError) return error;
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof OutboundError) return cause;
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') return new OutboundError('timeout', 'the endpoint did not answer in time');
  return new OutboundError('network', 'the endpoint could not be reached');
}

export function createOutbound(options: OutboundOptions): OutboundHttp {
  const max = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const agent = new Agent({
    connect: { lookup: pinnedLookup(options.resolve ?? systemResolver, options.allowPrivateUrls), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });

  async function call(url: string, init: RequestInit = {}): Promise<Response> {
    const refusal = outboundUrlRefusal(url, options.allowPrivateUrls);
    if (refusal) throw new OutboundError('refused', `the URL ${refusal.reason}`);
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const answer = await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      redirect: 'manual',
      signal,
      dispatcher: agent,
    });
    if (answer.status >= 300 && answer.status < 400) {
      await answer.body?.cancel().catch(() => undefined);
      throw new OutboundError('redirect', `the endpoint answered ${answer.status}, a redirect, which is not followed`);
    }
    const declared = Number(answer.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > max) {
      await answer.body?.cancel().catch(() => undefined);
      throw new OutboundError('too_large', `the response body declares ${declared} bytes, over ${max}`);
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

  return {
    allowPrivateUrls: options.allowPrivateUrls,
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

/**
 * Outbound HTTP that loads undici (and makes its agent) on the first call: the CLI opens the same
 * context as the service, yet most of its commands never call out, and loading undici is a large
 * share of a short command's start-up (bench/cli-startup.ts).
 */
import type { OutboundHttp, OutboundOptions } from './outbound-http.js';

export function lazyOutbound(options: OutboundOptions): OutboundHttp {
  let made: Promise<OutboundHttp> | undefined;
  const outbound = () => (made ??= import('./outbound-http.js').then((m) => m.createOutbound(options)));
  return {
    allowPrivateUrls: options.allowPrivateUrls,
    fetch: async (url, init) => (await outbound()).fetch(url, init),
    post: async (url, request) => (await outbound()).post(url, request),
    stream: async (url, request) => (await outbound()).stream(url, request),
    close: async () => {
      if (made) await (await made).close();
    },
  };
}

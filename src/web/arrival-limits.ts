/**
 * How long a request may take to reach the service (README, "Slow clients"). Without these, a client
 * that announced a body and then sent nothing, or a byte every few seconds, held its socket and the
 * memory behind it for as long as it liked: a few thousand such uploads cost hundreds of megabytes
 * and as many file descriptors. Node enforces the bounds itself, on the sockets, before any route
 * runs; a request cut off is answered by the server's clientError handler (web/pre-routing.ts).
 */

/**
 * From a connection's first byte (or its opening, when it sends none) to the end of the headers. A
 * client sends its headers in one go; 10 s covers a lossy mobile link's retransmissions many times over.
 */
export const HEADERS_TIMEOUT_MS = 10_000;

/**
 * From the same moment to the last byte of the body: the whole request. Bodies here are at most 64 KiB,
 * a second or two on the slowest link that still works. The bound is set for the gateway's proxy
 * (CONTRACT 8.1), whose bodies may reach 10 MB and come from customers' backends: 30 s lets one through at
 * about 2.8 Mbit/s or faster, and matches the 30 s a provider has to start answering a proxied call.
 * Node knows no routes, so raising this raises it for every page and form: whatever it allows, a
 * stalled client holds. A route that needs longer should bring a deadline of its own instead.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * How often Node looks for requests past those bounds (its default is 30 s, which would let a
 * stalled request live up to a minute). The look covers only requests still arriving: cheap.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * How long a kept-alive connection may sit idle between requests. Above the 60 s idle timeout of
 * AWS's load balancers and of nginx's upstream keep-alive, so that a proxy never reuses a connection
 * the node is closing, which would turn a request into a 502 (Fastify's default, kept on purpose). An idle connection holds a socket but no request; the next request it starts is bounded as above.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * The options of Node's HTTP server, as Fastify takes them (`requestTimeout` and `keepAliveTimeout`
 * are Fastify's own, which it sets on the server after creating it; the rest go to http.createServer).
 * `requireHostHeader` is off because Node's own answer to an HTTP/1.1 request without Host is a bare
 * 400 with no body: the app answers it instead, as every other bad request (web/pre-routing.ts).
 */
export const ARRIVAL_LIMITS = {
  requestTimeout: REQUEST_TIMEOUT_MS,
  keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
  http: { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS, requireHostHeader: false },
} as const;

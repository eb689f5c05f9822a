/**
 * The caller's body on its way to the provider (CONTRACT 8.1): counted as it passes, and stopped past
 * KEYWARD_PROXY_MAX_BODY_MB whether the size was declared or not (chunked). Stopping it fails the
 * provider's request, which is aborted; the route then answers 413.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';

export class BodyLimit extends Transform {
  bytes = 0;
  exceeded = false;
  readonly #max: number;

  constructor(max: number) {
    super();
    this.#max = max;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.byteLength;
    if (this.bytes > this.#max) {
      this.exceeded = true;
      done(new Error(`the request body passed ${this.#max} bytes`));
      return;
    }
    done(null, chunk);
  }
}

/** Request bodies' types set aside by setTypeAside, until the handler takes them back. */
const typesAside = new WeakMap<IncomingMessage, string>();

/**
 * The body's content-type taken off the request before Fastify reads it (an onRequest hook): Fastify
 * answers a type it cannot parse (`text`, `a, b`) with its own 415 before any route runs, yet the body
 * and its type are the provider's to judge (CONTRACT 8.1). Without one, the route's catch-all takes the body.
 */
export function setTypeAside(request: IncomingMessage): void {
  const type = request.headers['content-type'];
  if (type === undefined) return;
  typesAside.set(request, type);
  delete request.headers['content-type'];
}

/** The body's content-type back on the request, to be sent on with it. */
export function takeTypeBack(request: IncomingMessage): void {
  const type = typesAside.get(request);
  if (type !== undefined) request.headers['content-type'] = type;
}

/** Whether the request says it has a body: a length above zero, or a transfer coding (chunked). */
export function hasBody(request: IncomingMessage): boolean {
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/** The declared length, where one was declared. */
export function declaredLength(request: IncomingMessage): number | null {
  const value = request.headers['content-length'];
  return value === undefined ? null : Number(value);
}

/**
 * The caller's body piped through a limit. The caller's stream is left paused (not destroyed) when the
 * limit stops it, so a 413 can still be answered; a caller that breaks off its body (or whose
 * connection times out) ends the limit with an error, which pipe() alone would not pass on, and
 * whoever reads the limit would wait for ever.
 */
export function limitedBody(request: IncomingMessage, max: number): BodyLimit {
  const limit = new BodyLimit(max);
  request.pipe(limit);
  request.once('error', (error) => limit.destroy(error));
  request.once('close', () => {
    if (!request.complete) limit.destroy(new Error('the caller broke off its request body'));
  });
  return limit;
}

/**
 * After an answer given before the caller's body ended (a 413, a provider that failed), how long the
 * rest may still arrive (read and thrown away) before the connection is closed. Closing at once, with
 * the caller still writing, resets the connection, and many clients (fetch among them) then report a
 * network error instead of the answer they were sent.
 */
const UNUSED_BODY_READ_FOR_MS = 5_000;

/**
 * The rest of a body the provider will not get, read and thrown away (memory does not grow), so that
 * the answer reaches a caller still sending; the connection is kept for the caller's next request
 * once the body has ended, and closed if it has not ended UNUSED_BODY_READ_FOR_MS after the answer.
 */
export function discardUnusedBody(request: IncomingMessage, response: ServerResponse): void {
  // Flowing with nothing listening: each chunk is dropped as it comes.
  request.resume();
  response.once('finish', () => {
    if (request.complete) return;
    const close = setTimeout(() => request.socket.destroy(), UNUSED_BODY_READ_FOR_MS);
    close.unref();
    request.once('end', () => clearTimeout(close));
  });
}

/**
 * The caller's body on its way to the provider (CONTRACT 8.1): counted as it passes, and stopped past
 * KEYWARD_PROXY_MAX_BODY_MB whether the size was declared or not (chunked). Stopping it fails the
 * provider's request, which is aborted; the route then answers 413.
 */
import type { IncomingMessage } from 'node:http';
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

/**
 * Bodies read ahead before they are passed on: a request body up to a cap (readAhead: whole when it
 * ends within the cap, so it can be sent twice), an answer's up to its first chunk (answerBody), and
 * none of a 204's or 304's (noContent). What is not whole goes on as one stream that pulls the source
 * only as fast as its reader reads.
 */
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

export type ReadAhead = { whole: Buffer } | { stream: Readable };

/** Bytes passed on so far: counted as they go, for the log line of a call. */
export interface ByteCount {
  bytes: number;
}

export async function readAhead(source: Readable, cap: number, count: ByteCount = { bytes: 0 }): Promise<ReadAhead> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      count.bytes += size;
      return { whole: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) };
    }
    chunks.push(next.value);
    size += next.value.byteLength;
    if (size > cap) return { stream: Readable.from(rest(chunks, iterator, count), { objectMode: false }) };
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * An answer's body as it is to be passed on: whole where its first chunk was all of it (the length it
 * declared, then its end), otherwise streamed from its first chunk on, without waiting for more (an
 * event stream's first event reaches the caller at once). Waiting for the first chunk is what lets a
 * provider that breaks off before any byte be told apart from one that breaks off mid-answer.
 */
export async function answerBody(source: Readable, declaredLength: number | null, count: ByteCount = { bytes: 0 }): Promise<ReadAhead> {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await iterator.next();
  if (first.done) return { whole: EMPTY };
  const read = [first.value];
  if (first.value.byteLength === declaredLength) {
    // All of it came: the end follows at once (and the provider's connection goes back to the pool).
    const next = await iterator.next();
    if (next.done) {
      count.bytes += first.value.byteLength;
      return { whole: first.value };
    }
    read.push(next.value);
  }
  return { stream: Readable.from(rest(read, iterator, count), { objectMode: false }) };
}

/** undici's code for an answer that ended before the bytes its Content-Length promised. */
const LENGTH_MISMATCH = 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH';

/** Whether an answer with this status has no content by HTTP (RFC 9110 §6.4.1): a 204 or a 304. */
export const hasNoContent = (status: number) => status === 204 || status === 304;

/**
 * The body of an answer that has none (hasNoContent), whatever its Content-Length says: a 304's may
 * be the length a 200 would have had (RFC 9110 §8.6). undici takes that length as bytes still owed and
 * fails the body (closing its connection) when the answer ends without them; that is the answer
 * ending as it should, not the provider failing. Any other failure is the provider's.
 */
export async function noContent(source: Readable): Promise<ReadAhead> {
  source.resume();
  try {
    await finished(source);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== LENGTH_MISMATCH) throw error;
  }
  return { whole: EMPTY };
}

/**
 * The chunks read ahead, then the source's. When the reader stops early (the caller went away), the
 * generator's return closes the iterator, which destroys the source (and its connection).
 */
async function* rest(chunks: Buffer[], iterator: AsyncIterator<Buffer>, count: ByteCount): AsyncGenerator<Buffer> {
  try {
    for (const chunk of chunks.splice(0)) {
      count.bytes += chunk.byteLength;
      yield chunk;
    }
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      count.bytes += next.value.byteLength;
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/**
 * A body read ahead up to a cap: whole when it ends within the cap (a small answer is then sent as one
 * buffer, and a small request body can be sent twice), otherwise the chunks read so far and the rest,
 * as one stream that pulls the source only as fast as its reader reads (memory stays at the cap).
 */
import { Readable } from 'node:stream';

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

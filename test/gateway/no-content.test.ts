/**
 * A 204's or 304's body (services/gateway/read-ahead.ts noContent): none, whatever its Content-Length
 * said. undici fails such a body with a length mismatch once the answer ends without the bytes the
 * length promised; that is the answer ending as it should. Any other failure is the provider's.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { hasNoContent, noContent } from '../../src/services/gateway/read-ahead.js';

const failing = (code: string) =>
  new Readable({
    read() {
      this.destroy(Object.assign(new Error(code), { code }));
    },
  });

describe('the body of an answer without content', () => {
  it('is a 204 or a 304, and no other status', () => {
    expect([200, 201, 204, 205, 301, 304, 404].filter(hasNoContent)).toEqual([204, 304]);
  });

  it('is empty when the answer ends, or when undici reports the length it promised as missing', async () => {
    expect(await noContent(Readable.from([]))).toEqual({ whole: Buffer.alloc(0) });
    expect(await noContent(failing('UND_ERR_RES_CONTENT_LENGTH_MISMATCH'))).toEqual({ whole: Buffer.alloc(0) });
  });

  it('fails with any other failure: a reset is the provider breaking off', async () => {
    await expect(noContent(failing('ECONNRESET'))).rejects.toMatchObject({ code: 'ECONNRESET' });
    await expect(noContent(failing('UND_ERR_SOCKET'))).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });
});

/**
 * The raw answer written on sockets Node gives no response object (web/raw-answer.ts): every header
 * once, the length, Date and Connection its own whatever the caller passed, and no header line a
 * value could split in two.
 */
import { describe, expect, it } from 'vitest';
import { Problem } from '../../src/web/problem.js';
import { rawAnswer, rawProblem } from '../../src/web/raw-answer.js';

/** The header lines of a raw answer, names as written. */
const headerLines = (answer: string) => answer.split('\r\n\r\n', 1)[0]!.split('\r\n').slice(1);

describe('a raw answer', () => {
  it('carries each header once, its own Date, Content-Length and Connection over any the caller gave', () => {
    const answer = rawAnswer(400, { 'Content-Length': '999', Connection: 'keep-alive', 'X-Request-Id': 'r1', 'content-type': 'text/plain' }, 'héllo');
    expect(answer.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
    const names = headerLines(answer).map((line) => line.split(':', 1)[0]!);
    expect(names.sort()).toEqual(['connection', 'content-length', 'content-type', 'date', 'x-request-id']);
    expect(headerLines(answer)).toContain('content-length: 6');
    expect(headerLines(answer)).toContain('connection: close');
    expect(answer.endsWith('\r\n\r\nhéllo')).toBe(true);
  });

  it('refuses a header value or name that holds a line break', () => {
    expect(() => rawAnswer(400, { 'x-a': 'b\r\nset-cookie: x=1' }, '')).toThrow(/line break/);
    expect(() => rawAnswer(400, { 'x-a\nb': 'c' }, '')).toThrow(/line break/);
  });

  it("as a problem: problem+json with its charset, the problem's own headers, the request id in header and body", () => {
    const problem = new Problem('rate_limited', 'Slow down.', { headers: { 'retry-after': '3' } });
    const answer = rawProblem(problem, 'req_1');
    expect(headerLines(answer)).toEqual(
      expect.arrayContaining(['content-type: application/problem+json; charset=utf-8', 'retry-after: 3', 'x-request-id: req_1']),
    );
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toMatchObject({ code: 'rate_limited', status: 429, requestId: 'req_1' });
  });
});

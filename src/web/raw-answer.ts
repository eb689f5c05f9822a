/**
 * A whole HTTP/1.1 answer as text, for the sockets Node hands over with no response object (bytes it
 * could not parse, a CONNECT). It carries what every other answer carries (a Date, the length; the
 * caller gives the x-request-id) and closes the connection: after such a request the socket carries no
 * more HTTP.
 */
import { STATUS_CODES } from 'node:http';
import { type Problem, problemBody } from './problem.js';

const LINE_BREAK = /[\r\n]/;

/** `headers` are the caller's own (names any case); Date, Content-Length and Connection are set here. */
export function rawAnswer(status: number, headers: Readonly<Record<string, string>>, body: string): string {
  const all: Record<string, string> = { date: new Date().toUTCString() };
  for (const [name, value] of Object.entries(headers)) {
    // Nothing the callers pass holds one; a header split in two would be a second header of anyone's choosing.
    if (LINE_BREAK.test(name) || LINE_BREAK.test(value)) throw new Error(`a raw answer's header ${JSON.stringify(name)} holds a line break`);
    all[name.toLowerCase()] = value;
  }
  all['content-length'] = String(Buffer.byteLength(body));
  all.connection = 'close';
  const head = Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head.join('')}\r\n${body}`;
}

/** The problem+json answer, as problem-answers.ts gives one on a reply: its own headers, the request id in header and body. */
export function rawProblem(problem: Problem, requestId: string): string {
  const headers = { ...problem.headers, 'content-type': 'application/problem+json; charset=utf-8', 'x-request-id': requestId };
  return rawAnswer(problem.status, headers, JSON.stringify(problemBody(problem, requestId)));
}

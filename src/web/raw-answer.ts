/**
 * A whole HTTP/1.1 answer as text, for the sockets Node hands over with no response object (bytes it
 * could not parse, a CONNECT). It carries what every other answer carries (a Date, the x-request-id,
 * the length) and closes the connection: after such a request the socket carries no more HTTP.
 */
import { STATUS_CODES } from 'node:http';

export function rawAnswer(status: number, headers: Record<string, string>, body: string): string {
  const all = { date: new Date().toUTCString(), ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
  const head = Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head.join('')}\r\n${body}`;
}

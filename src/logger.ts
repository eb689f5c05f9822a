import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Headers that must never reach a log line. The service does not log requests' headers or bodies in
 * the first place; this is the second line of defence. (Exact paths only: pino's wildcard paths cost
 * more per line than the rest of the line together.)
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-service-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-service-key"]',
  'headers.cookie',
];

/**
 * Without a destination, lines go to stdout through a 4 KiB buffer: one write every few dozen lines
 * instead of a synchronous write a line. `serve` flushes it every second and when it stops, so a
 * quiet service's lines still appear promptly.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const out = destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096 });
  return pino({ level, base: { service: 'keyward' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, out);
}

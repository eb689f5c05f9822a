import { createRequire } from 'node:module';
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
 * Lines a person reads on a terminal: `[12:00:00.000] INFO: request {"method":"GET",…}`, one a line,
 * coloured. pino-pretty formats in this process, after pino has redacted the line, so a terminal sees
 * exactly what a JSON line would carry. Loaded only here: a service whose stdout is a file or a pipe
 * never loads it.
 */
function terminalStream(): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({ destination: 1, sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
}

/**
 * Without a destination: on a terminal (stdout a TTY), readable lines (terminalStream); otherwise
 * JSON lines to stdout through a 4 KiB buffer, one write every few dozen lines instead of a
 * synchronous write a line. `serve` flushes it every second and when it stops, so a quiet service's
 * lines still appear promptly.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const out = destination ?? (process.stdout.isTTY ? terminalStream() : pino.destination({ dest: 1, sync: false, minLength: 4096 }));
  return pino({ level, base: { service: 'keyward' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, out);
}

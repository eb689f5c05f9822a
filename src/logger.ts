import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Fields that must never reach a log line, wherever they appear. The service does not log them in the
 * first place; this is the second line of defence.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-service-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-service-key"]',
  'headers.cookie',
  '*.password',
  '*.clientSecret',
  '*.client_secret',
  '*.accessToken',
  '*.refreshToken',
  '*.values',
  '*.key',
  '*.serverKey',
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

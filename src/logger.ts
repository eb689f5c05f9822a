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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, base: { service: 'keyward' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}

import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type LogFn, type Logger } from 'pino';

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

type LogArguments = Parameters<LogFn>;

/**
 * request.log, made on first use. Fastify gives every request a pino child (its bindings serialised,
 * a logger object set up), yet a request that goes well logs one line only: app.ts writes it through
 * the root logger with the same binding first. A line written through request.log comes out exactly
 * as from the child, which is made then.
 */
class RequestLogger implements FastifyBaseLogger {
  #made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get #logger(): FastifyBaseLogger {
    this.#made ??= this.parent.child(this.bindings, this.options);
    return this.#made;
  }

  get level(): string {
    return this.#logger.level;
  }

  set level(level: string) {
    this.#logger.level = level;
  }

  fatal = (...args: LogArguments) => this.#logger.fatal(...args);
  error = (...args: LogArguments) => this.#logger.error(...args);
  warn = (...args: LogArguments) => this.#logger.warn(...args);
  info = (...args: LogArguments) => this.#logger.info(...args);
  debug = (...args: LogArguments) => this.#logger.debug(...args);
  trace = (...args: LogArguments) => this.#logger.trace(...args);
  silent = (...args: LogArguments) => this.#logger.silent(...args);
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: request.log as a RequestLogger. */
export function requestLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options);
}

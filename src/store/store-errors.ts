/** What a database error means, the same on both engines. */
import { RETIRED_KEY_REFUSAL } from './migrations/013-retired-master-keys.js';

/** A row refused by a unique key (PostgreSQL's 23505, SQLite's unique or primary-key constraint). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // Not every SQLITE_CONSTRAINT_*: a trigger's refusal (SQLITE_CONSTRAINT_TRIGGER) is no duplicate.
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * A value refused because the master key that sealed it was retired (migrations/013's trigger:
 * PostgreSQL's custom SQLSTATE KWR01, SQLite's trigger constraint). Its message is the line to show.
 */
export function isRetiredMasterKeyRefusal(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && (code === 'KWR01' || (code === 'SQLITE_CONSTRAINT_TRIGGER' && error.message === RETIRED_KEY_REFUSAL));
}

/**
 * The database cannot be reached for now: the store throws this in place of the driver's error
 * (classifying-dialect.ts), so every surface answers it the same way (503 database_unavailable with
 * Retry-After, the 503 page, the CLI's one line) and anything else stays a fault (500). Its message
 * names only the reason's code: a driver's own message can carry the host, the port or the user.
 */
export class DatabaseUnavailable extends Error {
  /** The code that told: `ECONNREFUSED`, `57P01`, `SQLITE_BUSY`, `connection terminated`, … (never a host or a secret). */
  readonly reason: string;

  constructor(reason: string, cause: unknown) {
    super(`the database cannot be reached (${reason})`, { cause });
    this.name = 'DatabaseUnavailable';
    this.reason = reason;
  }
}

/**
 * The socket errors that mean the server is gone, refusing, unreachable or unresolvable (a container
 * whose name disappears while it restarts answers ENOTFOUND) rather than that our query is wrong.
 */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs for a server that is going or not there yet (besides class 08, connection
 * exception, taken whole): 57P01 admin_shutdown (a fast stop terminates every session), 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down, in recovery), and 53300
 * too_many_connections, a server that turns new connections away for now. A wrong password (28P01)
 * or a missing database (3D000) is a configuration fault: waiting does not mend it, so it stays 500.
 */
const POSTGRES_CODES: ReadonlySet<string> = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres and its pool give these without a code; their text is all there is to go by. */
const POSTGRES_MESSAGES: ReadonlyMap<string, string> = new Map([
  ['Connection terminated unexpectedly', 'connection terminated'],
  ['Connection terminated due to connection timeout', 'connect timeout'],
  ['timeout exceeded when trying to connect', 'connect timeout'],
  ['Client has encountered a connection error and is not queryable', 'connection terminated'],
]);

/**
 * SQLite: SQLITE_BUSY (and its RECOVERY and TIMEOUT forms) is another process holding the database
 * past the busy timeout (a long CLI run beside the service): the request was right and succeeds once
 * the lock is let go, so it is a 503 to retry, not a bug to page someone for. SQLITE_CANTOPEN (and its
 * extended forms) is a file that cannot be opened: a volume gone or not mounted yet, SQLite's refused
 * connection. Everything else the file answers stays a fault (500): SQLITE_IOERR, SQLITE_FULL,
 * SQLITE_CORRUPT or SQLITE_READONLY mean the database was reached and its storage failed; retrying in
 * a few seconds does not mend a broken or full disk, and someone must look. SQLITE_BUSY_SNAPSHOT too:
 * with every transaction begun IMMEDIATE (open.ts) it can only come from a mistake of ours.
 */
function sqliteReason(code: string): string | null {
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_RECOVERY' || code === 'SQLITE_BUSY_TIMEOUT') return code;
  if (code === 'SQLITE_CANTOPEN' || code.startsWith('SQLITE_CANTOPEN_')) return code;
  return null;
}

/** Why an error the driver threw means the database cannot be reached, as a short code; null for any other error. */
export function unreachableReason(error: unknown, depth = 0): string | null {
  if (typeof error !== 'object' || error === null || depth > 3) return null;
  if (error instanceof DatabaseUnavailable) return error.reason;
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || POSTGRES_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return code;
    const sqlite = code.startsWith('SQLITE_') ? sqliteReason(code) : null;
    if (sqlite) return sqlite;
  }
  if (typeof message === 'string') {
    const known = POSTGRES_MESSAGES.get(message);
    if (known) return known;
  }
  // A wrapped error (the pool's timeout wraps the client's) or every address of a name refused at once (AggregateError).
  for (const inner of [cause, ...(Array.isArray(errors) ? errors : [])]) {
    const reason = unreachableReason(inner, depth + 1);
    if (reason) return reason;
  }
  return null;
}

/** The error a store call throws for `error`: DatabaseUnavailable where the database cannot be reached, else `error` as it was. */
export function storeError(error: unknown): unknown {
  if (error instanceof DatabaseUnavailable) return error;
  const reason = unreachableReason(error);
  return reason === null ? error : new DatabaseUnavailable(reason, error);
}

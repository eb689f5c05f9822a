/** What a database error means, the same on both engines. */

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
  return (
    error instanceof Error && (code === 'KWR01' || (code === 'SQLITE_CONSTRAINT_TRIGGER' && error.message.startsWith('sealed under a retired master key')))
  );
}

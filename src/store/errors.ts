/** What a database error means, the same on both engines. */

/** A row refused by a unique key (PostgreSQL's 23505, SQLite's SQLITE_CONSTRAINT_*). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT'));
}

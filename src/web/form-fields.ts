/**
 * Reading what a request chose by name (a posted form field, a `?notice=` code). Only a record's own
 * entries count: a plain lookup of `constructor` or `toString` finds Object.prototype's functions.
 */

/** A record's own entry, or undefined. */
export function own<T>(record: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** Text of a posted form field, or '' when missing or not a string. */
export function formText(body: unknown, name: string): string {
  const value = body && typeof body === 'object' ? own(body as Record<string, unknown>, name) : undefined;
  return typeof value === 'string' ? value : '';
}

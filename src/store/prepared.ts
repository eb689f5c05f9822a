import type { Compilable } from 'kysely';
import type { QueryRunner } from './connections.js';

/**
 * A query built and compiled once, then run with new parameters. Kysely builds and compiles a query
 * on every call, which on the per-request paths cost more than SQLite's own work. The query is built
 * with stand-in values; each compiled parameter that is a stand-in is replaced by the argument in
 * its place, so the order in which the builder uses them does not matter.
 */
export function preparedQuery<Row, Args extends string[]>(
  run: QueryRunner,
  arity: Args['length'],
  build: (...args: Args) => Compilable<Row>,
): (...args: Args) => Promise<Row[]> {
  const standIns = Array.from({ length: arity }, (_, i) => `\u0000prepared-argument-${i}\u0000`) as Args;
  const compiled = build(...standIns).compile();
  const slots = compiled.parameters.map((value) => standIns.indexOf(value as string));
  return (...args: Args) => {
    const parameters = compiled.parameters.map((value, i) => (slots[i]! >= 0 ? args[slots[i]!] : value));
    return run(compiled.sql, parameters) as Promise<Row[]>;
  };
}

/**
 * Statements built and compiled once for the hot paths: their names on PostgreSQL, the placing of
 * their arguments, and the cast their arguments are compared through.
 */
import { type Compilable, type CompiledQuery, sql } from 'kysely';
import { sha256Hex } from '../primitives/digest.js';
import type { QueryRunner } from './connections.js';

/**
 * The name a prepared statement goes under on PostgreSQL (postgres-runner.ts): from its text, so two
 * statements never share a name (pg refuses a name used for another text) and every node gives the
 * same statement the same name. 64 bits of the digest: the few dozen texts cannot meet by chance.
 */
export function statementName(sqlText: string): string {
  return `kw_${sha256Hex(sqlText).slice(0, 16)}`;
}

/**
 * A query built and compiled once, with stand-in values for its arguments, and how to put the
 * arguments of a call in their places: each compiled parameter that is a stand-in is replaced by the
 * argument in its place, so the order in which the builder uses them does not matter. A stand-in the
 * builder wrote into the SQL text instead of taking it as a parameter would be run as it is, so that
 * fails here, once.
 */
function compiledWithStandIns<Row, Args extends unknown[]>(arity: number, build: (...args: Args) => Compilable<Row>) {
  const standIns = Array.from({ length: arity }, (_, i) => `\u0000prepared-argument-${i}\u0000`);
  const compiled = build(...(standIns as unknown as Args)).compile();
  const missing = standIns.filter((standIn) => !compiled.parameters.includes(standIn));
  if (missing.length > 0) throw new Error(`a prepared statement takes ${missing.length} of its ${arity} arguments in its text: ${compiled.sql}`);
  const slots = compiled.parameters.map((value) => standIns.indexOf(value as string));
  const bind = (args: readonly unknown[]) => compiled.parameters.map((value, i) => (slots[i]! >= 0 ? args[slots[i]!] : value));
  return { compiled, bind };
}

/**
 * A statement built and compiled once, then run with new parameters by `run` (a read, or a write that
 * runs alone). Kysely builds and compiles a query on every call, which on the per-request paths cost
 * more than SQLite's own work. It runs under a name (statementName), so PostgreSQL parses it once per
 * connection.
 */
export function preparedQuery<Row, Args extends unknown[]>(
  run: QueryRunner,
  arity: Args['length'],
  build: (...args: Args) => Compilable<Row>,
): (...args: Args) => Promise<Row[]> {
  const { compiled, bind } = compiledWithStandIns(arity, build);
  const name = statementName(compiled.sql);
  return (...args: Args) => run(compiled.sql, bind(args), name) as Promise<Row[]>;
}

/**
 * preparedQuery for a statement whose text depends on how many keys it takes (a VALUES or IN list:
 * statements-together.ts), built for a count when first asked for it and kept: one text, and so one
 * name and one plan, per count.
 */
export function preparedPerCount<Row>(
  run: QueryRunner,
  argumentsFor: (count: number) => number,
  build: (...args: string[]) => Compilable<Row>,
): (count: number) => (...args: string[]) => Promise<Row[]> {
  const statements = new Map<number, (...args: string[]) => Promise<Row[]>>();
  return (count) => {
    let statement = statements.get(count);
    if (!statement) {
      statement = preparedQuery(run, argumentsFor(count), build);
      statements.set(count, statement);
    }
    return statement;
  };
}

/**
 * An argument compared through a cast: never a bare `column = ?` in a prepared statement of the hot
 * paths, which SQLite (built with STAT4) may weigh against a partial index's condition and then
 * re-prepare each time its parameters are bound (the member reads' constructor, audience-repository.ts,
 * says when and what it costs).
 */
export const asText = (value: string) => sql<string>`cast(${value} as text)`;

/**
 * A statement of the write path compiled once (run on the open transaction or the root connection,
 * through Kysely's executeQuery, which then skips only the build and the compile). Arguments may be
 * any values (a limit is a number).
 */
export function compiledOnce<Row, Args extends unknown[]>(
  arity: Args['length'],
  build: (...args: Args) => Compilable<Row>,
): (...args: Args) => CompiledQuery<Row> {
  const { compiled, bind } = compiledWithStandIns(arity, build);
  return (...args: Args) => ({ ...compiled, parameters: bind(args) });
}

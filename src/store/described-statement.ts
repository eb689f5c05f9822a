/**
 * A named statement run without describing its result again (postgres-runner.ts). pg's own Query,
 * on every run, copies its config, asks PostgreSQL to describe the portal, and turns the columns'
 * description that comes back into a parser per column. On the proxied call's statement of 28
 * columns that was about a third of the client's CPU per statement (bench/RESULTS.md, "The columns
 * described once"). Here a connection describes a statement once, on its first run there: later runs
 * send only Bind, Execute and Sync, and the rows are parsed with the parsers learnt then.
 *
 * What each connection learnt stays its own: during a rolling upgrade another connection may have
 * parsed the same text against another schema. A statement whose result changed on the server fails
 * with 0A000 rather than sending other columns, and postgres-runner.ts sends it again under a fresh
 * name, which is described afresh.
 *
 * It is a pg Submittable, the extension point pg-cursor and pg-query-stream are built on: pg's client
 * calls submit with its connection, then hands it the backend's messages until ReadyForQuery.
 */
import { createRequire } from 'node:module';
import pg from 'pg';

type Parser = (text: string) => unknown;

/** A statement's columns as a connection described them: their names and each one's parser. */
interface Columns {
  names: string[];
  parsers: Parser[];
}

/** The part of pg's connection a run uses (pg's own typings lag behind it). */
interface WireConnection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  stream: { cork(): void; uncork(): void };
  parse(message: { text: string; name: string; types: never[] }): void;
  bind(message: { portal: string; statement: string; values: readonly unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
}

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format: 'text' | 'binary';
}

/** pg's own mapping of a JavaScript value to a parameter (a Date, a Buffer, an array, JSON), as its Query binds them. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

/** What each connection described, by statement name. */
const describedOn = new WeakMap<object, Map<string, Columns>>();

/** The columns of a statement that returns no rows (a write without RETURNING): described, none. */
const NO_COLUMNS: Columns = { names: [], parsers: [] };

export type RowsCallback = (error: Error | null, result?: { rows: Record<string, unknown>[] }) => void;

export class DescribedStatement {
  /** Set by pg's client (pool.query's callback): called once, with the rows or the error. */
  callback: RowsCallback | undefined;
  #connection: WireConnection | undefined;
  #columns: Columns | undefined;
  readonly #rows: Record<string, unknown>[] = [];

  constructor(
    /** pg keeps the parsed text under this name (its client's ParseComplete handler reads both). */
    readonly name: string,
    readonly text: string,
    readonly values: readonly unknown[],
  ) {}

  submit(connection: WireConnection): Error | undefined {
    const parsed = connection.parsedStatements[this.name] ?? connection.submittedNamedStatements[this.name];
    if (parsed !== undefined && parsed !== this.text)
      return new Error(`Prepared statements must be unique - '${this.name}' was used for a different statement`);
    this.#connection = connection;
    this.#columns = parsed === undefined ? undefined : describedOn.get(connection)?.get(this.name);
    // One write for all the messages, as pg's Query does.
    connection.stream.cork();
    try {
      if (parsed === undefined) {
        connection.parse({ text: this.text, name: this.name, types: [] });
        connection.submittedNamedStatements[this.name] = this.text;
      }
      connection.bind({ portal: '', statement: this.name, values: this.values, valueMapper: prepareValue });
      if (this.#columns === undefined) connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: 0 });
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return undefined;
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    const columns: Columns = {
      names: message.fields.map((field) => field.name),
      // pg's default parsers, as its client gives its Query (Keyward overrides none).
      parsers: message.fields.map((field) => pg.types.getTypeParser(field.dataTypeID, field.format) as Parser),
    };
    this.#columns = columns;
    this.#remember(columns);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    const { names, parsers } = this.#columns!;
    const row: Record<string, unknown> = {};
    const { fields } = message;
    for (let i = 0; i < fields.length; i++) {
      const text = fields[i]!;
      row[names[i]!] = text === null ? null : parsers[i]!(text);
    }
    this.#rows.push(row);
  }

  handleReadyForQuery(): void {
    // Described, and no RowDescription came: the statement returns no rows.
    if (this.#columns === undefined) this.#remember(NO_COLUMNS);
    this.#settle(null);
  }

  handleError(error: Error): void {
    this.#settle(error);
  }

  // Messages a statement of these never brings; pg's client calls them on any submittable.
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}

  #remember(columns: Columns): void {
    const connection = this.#connection!;
    const described = describedOn.get(connection) ?? new Map<string, Columns>();
    describedOn.set(connection, described);
    described.set(this.name, columns);
  }

  #settle(error: Error | null): void {
    const callback = this.callback;
    this.callback = undefined;
    if (error) callback?.(error);
    else callback?.(null, { rows: this.#rows });
  }
}

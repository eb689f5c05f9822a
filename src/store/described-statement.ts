/**
 * A named statement run without describing its result again (postgres-runner.ts). pg's own Query,
 * on every run, copies its config, asks PostgreSQL to describe the portal, and turns the columns'
 * description that comes back into a parser per column. On a statement of 28 columns that was about
 * a third of the client's CPU per statement (bench/RESULTS.md, "PostgreSQL's named statements described
 * once per connection"; npm run bench:statements). Here a connection describes a statement once, on
 * its first run there: later runs send only Bind, Execute and Sync, and the rows are parsed with the
 * parsers learnt then.
 *
 * What each connection learnt stays its own: during a rolling upgrade another connection may have
 * parsed the same text against another schema. PostgreSQL refuses to run a prepared statement whose
 * result changed (0A000) rather than send other columns, and postgres-runner.ts sends it again under a
 * fresh name, which is described afresh. That holds where a pg connection is one server session, as
 * Keyward connects. A transaction-mode pooler in front of the server, which may prepare the text again
 * on another session, would not answer 0A000; nor would a session where someone else prepared another
 * statement under the name. A row with another number of columns than learnt then fails the run
 * (not sent again: the statement did run, and it may have been a write), and its connection is
 * closed by the pool; a column of a changed type in the same place would not be seen. Such a pooler
 * is not supported.
 *
 * It is a pg Submittable, the extension point pg-cursor and pg-query-stream are built on: pg's client
 * calls submit with its connection, then hands it the backend's messages until ReadyForQuery (or an
 * ErrorResponse, after which it hands it nothing more). Nothing here may throw while it does: the
 * call comes from the socket's data event, so a throw would end the process.
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
  bind(message: { portal: string; statement: string; values: readonly unknown[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
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
  /** Why the rows that came cannot be answered; settled with at ReadyForQuery, as pg's Query does. */
  #failure: Error | undefined;

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
    // Mapped before anything is written: a value pg cannot send (a circular object) is this run's
    // error, answered by the client, with nothing half sent on the connection.
    let values: unknown[];
    try {
      values = this.values.map((value) => prepareValue(value));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
    this.#connection = connection;
    this.#columns = parsed === undefined ? undefined : describedOn.get(connection)?.get(this.name);
    // One write for all the messages, as pg's Query does.
    connection.stream.cork();
    try {
      if (parsed === undefined) {
        connection.parse({ text: this.text, name: this.name, types: [] });
        connection.submittedNamedStatements[this.name] = this.text;
      }
      connection.bind({ portal: '', statement: this.name, values });
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
    if (this.#failure !== undefined) return;
    const columns = this.#columns;
    const { fields } = message;
    if (columns === undefined || fields.length !== columns.names.length) {
      // Not the statement this connection described (see above): nothing of it is read.
      describedOn.get(this.#connection!)?.delete(this.name);
      this.#failure = new Error(`statement ${this.name} answered ${fields.length} columns, not the ${columns?.names.length ?? 0} it was described with`);
      return;
    }
    const row: Record<string, unknown> = {};
    try {
      for (let i = 0; i < fields.length; i++) {
        const text = fields[i] as string | null;
        row[columns.names[i]!] = text === null ? null : columns.parsers[i]!(text);
      }
    } catch (error) {
      this.#failure = error instanceof Error ? error : new Error(String(error));
      return;
    }
    this.#rows.push(row);
  }

  handleReadyForQuery(): void {
    // Described, and no RowDescription came: the statement returns no rows.
    if (this.#columns === undefined && this.#failure === undefined) this.#remember(NO_COLUMNS);
    this.#settle(this.#failure ?? null);
  }

  handleError(error: Error): void {
    this.#settle(error);
  }

  // The end of the rows: the callers take the rows alone, not the count it carries.
  handleCommandComplete(): void {}
  // Messages these statements never bring (an empty text, a row limit, COPY), handled as pg's Query does.
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: WireConnection): void {
    connection.sendCopyFail('No source stream defined');
  }
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

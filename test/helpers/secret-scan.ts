/**
 * Plaintext searches for "secrets at rest" suites: every stored row, the SQLite file and its
 * write-ahead log, and the service's log lines, each searched for a list of known secret values.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { ServiceContext } from '../../src/services/context.js';
import { snapshotTables } from './hosted-form.js';

/** The secrets found in `text`, each named by its first 10 characters only (a failure message must not print one whole). */
export function leaked(text: string, secrets: Iterable<string>): string[] {
  return [...new Set(secrets)].filter((secret) => text.includes(secret)).map((secret) => `${secret.slice(0, 10)}…`);
}

/** Every row of every table as one text (sealed bytes as hex, as snapshotTables gives them). */
export async function storedRowsText(ctx: ServiceContext): Promise<string> {
  return JSON.stringify(await snapshotTables(ctx));
}

/** The SQLite database file and its -wal, where present, each read as latin1 text (bytes kept one to one). */
export function sqliteFilesText(file: string): string[] {
  return [file, `${file}-wal`].filter(existsSync).map((path) => readFileSync(path).toString('latin1'));
}

/**
 * One place per query: every statement lives in a repository under src/store/, and the store knows
 * nothing of the layers above it. Read from the source itself, so a query written anywhere else, or
 * an import that turns the layering around, fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../helpers/cli-process.js';

const SRC = join(PROJECT_ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => ({ name: relative(SRC, path).split(sep).join('/'), text: readFileSync(path, 'utf8') }));
const QUERY_BUILDING = [
  /from 'kysely'/,
  /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(/,
  /\bsql`/,
  /\bstore\.(db|current)\b/,
  /\.transaction\(\)\.execute\(/,
];

describe('the store layer', () => {
  it('holds every query: nothing outside src/store/ builds one or reaches the query builder', () => {
    const outside = files.filter((file) => !file.name.startsWith('store/'));
    expect(outside.length).toBeGreaterThan(50);
    const offenders = outside.flatMap((file) =>
      QUERY_BUILDING.filter((pattern) => pattern.test(file.text)).map((pattern) => `${file.name}: ${pattern.source}`),
    );
    expect(offenders).toEqual([]);
  });

  it('imports nothing from the layers above it: only its own files and the primitives', () => {
    const store = files.filter((file) => file.name.startsWith('store/'));
    const upward = store.flatMap((file) =>
      [...file.text.matchAll(/from '(\.\.?\/[^']+)'/g)]
        .map((match) => match[1]!)
        // Resolved from the importing file: src/primitives/ holds leaf modules (clock, ids…); anything
        // else outside src/store/ (services/, web/, …) is a layer above.
        .filter((target) => !/^(store|primitives)\//.test(posix.join(posix.dirname(file.name), target)))
        .map((target) => `${file.name} imports ${target}`),
    );
    expect(store.length).toBeGreaterThan(20);
    expect(upward).toEqual([]);
  });
});

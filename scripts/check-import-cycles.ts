/**
 * The folder graph of src/: every `import … from`, `export … from` and `import()` between files, read
 * as an edge between top-level folders (a file directly in src/ is a node of its own: src/config.ts is
 * `config`). Imports inside one folder are not edges. The same check then runs one level down in each
 * folder made of folders (services/: one folder per domain). Prints the edges and exits 1 when a graph
 * has a cycle, naming it and the files that make each of its edges.
 *
 *   npx tsx scripts/check-import-cycles.ts [folder]     (src/ unless a folder is given)
 *
 * Type-only imports count: a folder that needs another's types cannot be understood, moved or
 * compiled without it either.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface FileImport {
  from: string;
  to: string;
}

export interface FolderGraph {
  /** `from → to` for every pair of different nodes with at least one import, each with the imports that make it. */
  edges: Map<string, FileImport[]>;
  /** Each cycle as its nodes in order, the first repeated at the end (`a → b → a`). */
  cycles: string[][];
}

const SOURCE = /\.(ts|tsx|mts|cts)$/;

function sourceFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The node a file belongs to: its top-level folder, or its own name without extension. */
export function nodeOf(root: string, file: string): string {
  const parts = relative(root, file).split(sep);
  return parts.length > 1 ? parts[0]! : parts[0]!.replace(SOURCE, '').replace(/\.js$/, '');
}

/** Relative specifiers only: packages and node: builtins are not part of the graph. */
function importedFiles(file: string): string[] {
  const { importedFiles: found } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return found.map((entry) => entry.fileName).filter((name) => name.startsWith('./') || name.startsWith('../'));
}

export function folderGraph(root: string): FolderGraph {
  const absoluteRoot = resolve(root);
  const edges = new Map<string, FileImport[]>();
  for (const file of sourceFiles(absoluteRoot)) {
    const from = nodeOf(absoluteRoot, file);
    for (const specifier of importedFiles(file)) {
      const target = resolve(dirname(file), specifier);
      if (!target.startsWith(absoluteRoot + sep)) continue;
      const to = nodeOf(absoluteRoot, target);
      if (to === from) continue;
      const key = `${from} → ${to}`;
      const list = edges.get(key) ?? [];
      list.push({ from: relative(absoluteRoot, file), to: relative(absoluteRoot, target) });
      edges.set(key, list);
    }
  }
  return { edges, cycles: findCycles(edges) };
}

/**
 * One cycle per strongly connected component of more than one node (Tarjan), walked as a concrete
 * loop so the report names a path that can be followed file by file.
 */
function findCycles(edges: Map<string, FileImport[]>): string[][] {
  const next = new Map<string, string[]>();
  for (const key of [...edges.keys()].sort()) {
    const [from, to] = key.split(' → ') as [string, string];
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const to of next.get(node)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let folder: string;
      do {
        folder = stack.pop()!;
        component.push(folder);
      } while (folder !== node);
      if (component.length > 1) components.push(component);
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => loopThrough(component.sort(), next));
}

/** A shortest loop from the component's first node back to itself, staying inside the component. */
function loopThrough(component: string[], next: Map<string, string[]>): string[] {
  const start = component[0]!;
  const inside = new Set(component);
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of next.get(node)!) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== start && at !== undefined; at = parent.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!parent.has(to)) {
        parent.set(to, node);
        queue.push(to);
      }
    }
  }
  return [...component, start];
}

/**
 * The graphs checked: src/ itself, then each of its folders that is made of folders, on its own
 * (services/, one folder per domain: a domain may use another's services, never through a cycle).
 * Their files at that level are nodes of their own there (services/context.ts is `context`).
 */
export function checkedGraphs(root: string): { folder: string; graph: FolderGraph }[] {
  const nested = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && readdirSync(join(root, entry.name), { withFileTypes: true }).some((inner) => inner.isDirectory()))
    .map((entry) => entry.name)
    .sort();
  return [{ folder: '.', graph: folderGraph(root) }, ...nested.map((folder) => ({ folder, graph: folderGraph(join(root, folder)) }))];
}

export function report(graph: FolderGraph, level = 'top-level folders'): string {
  const lines = [...graph.edges.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, imports]) => `${key}  (${imports.length} import${imports.length === 1 ? '' : 's'})`);
  if (graph.cycles.length === 0) return [...lines, '', `No cycle between ${level}.`].join('\n');
  const cycles = graph.cycles.flatMap((cycle) => [
    `CYCLE: ${cycle.join(' → ')}`,
    ...cycle.slice(1).map((to, i) => {
      const first = graph.edges.get(`${cycle[i]} → ${to}`)![0]!;
      return `  ${cycle[i]} → ${to}: ${first.from} imports ${first.to}`;
    }),
  ]);
  return [...lines, '', ...cycles].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'src');
  const graphs = checkedGraphs(root);
  for (const { folder, graph } of graphs) {
    if (folder !== '.') console.log(`\nInside ${folder}/:`);
    console.log(report(graph, folder === '.' ? undefined : `the folders of ${folder}/`));
  }
  process.exitCode = graphs.some(({ graph }) => graph.cycles.length > 0) ? 1 : 0;
}

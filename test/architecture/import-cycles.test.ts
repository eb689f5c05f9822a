/**
 * The folder graph of src/ (scripts/check-import-cycles.ts) on the real tree, and on small trees
 * written here with a cycle, so the check is seen to fail when it should.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { checkedGraphs, folderGraph, report } from '../../scripts/check-import-cycles.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');
const AREAS = ['api', 'connect', 'dashboard'];

const trees: string[] = [];
afterAll(() => {
  for (const tree of trees) rmSync(tree, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'keyward-imports-'));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the folders of src/', () => {
  const graph = folderGraph(SRC);
  const targetsOf = (node: string) => [...graph.edges.keys()].filter((key) => key.startsWith(`${node} → `)).map((key) => key.split(' → ')[1]!);

  it('import each other without a cycle', () => {
    expect(graph.edges.size).toBeGreaterThan(20);
    expect(graph.cycles, report(graph)).toEqual([]);
  });

  it('keep the shared web helpers a leaf that imports no area', () => {
    expect(targetsOf('web').filter((to) => AREAS.includes(to) || to === 'app')).toEqual([]);
  });

  it('keep each area to itself: no area imports another, only the root assembles them', () => {
    for (const area of AREAS)
      expect(
        targetsOf(area).filter((to) => AREAS.includes(to) || to === 'app'),
        area,
      ).toEqual([]);
    const assemblers = [...graph.edges.keys()].filter((key) => AREAS.includes(key.split(' → ')[1]!)).map((key) => key.split(' → ')[0]);
    expect(new Set(assemblers)).toEqual(new Set(['app']));
  });
});

describe('the domain folders of src/services/', () => {
  const graphs = checkedGraphs(SRC);
  const services = graphs.find(({ folder }) => folder === 'services')!.graph;

  it('are checked as a level of their own', () => {
    expect(graphs.map(({ folder }) => folder)).toContain('services');
    expect(services.edges.has('oauth → credentials')).toBe(true);
  });

  it('import each other without a cycle', () => {
    expect(services.cycles, report(services, 'the folders of services/')).toEqual([]);
  });

  it('keep the shared kernel (context, errors, observer, well-formed) free of any domain', () => {
    const kernel = ['context', 'domain-error', 'observer', 'well-formed'];
    const domains = new Set([...services.edges.keys()].map((key) => key.split(' → ')[0]!).filter((node) => !kernel.includes(node)));
    const fromKernel = [...services.edges.keys()].filter((key) => kernel.includes(key.split(' → ')[0]!) && domains.has(key.split(' → ')[1]!));
    expect(fromKernel).toEqual([]);
  });
});

describe('the check on a tree with a cycle', () => {
  const cyclic = {
    'config.ts': "import { a } from './a/one.js';\nexport const config = a;\n",
    'a/one.ts': "export { b } from '../b/two.js';\nexport const a = 1;\n",
    'a/inner.ts': "import { a } from './one.js';\nexport const inner = a;\n",
    // A dynamic import is an edge too; one in a comment is not: // import('../a/one.js')
    'b/two.ts': "export const b = 2;\nexport const late = () => import('../config.js');\n// import { a } from '../a/one.js';\n",
    'c/leaf.ts': "import type { b } from '../b/two.js';\nexport type B = typeof b;\n",
  };

  it('finds the edges, counting type-only, re-exports and dynamic imports, not comments or same-folder imports', () => {
    const graph = folderGraph(tree(cyclic));
    expect([...graph.edges.keys()].sort()).toEqual(['a → b', 'b → config', 'c → b', 'config → a']);
  });

  it('names the cycle and the file behind each of its edges', () => {
    const graph = folderGraph(tree(cyclic));
    expect(graph.cycles).toEqual([['a', 'b', 'config', 'a']]);
    const text = report(graph);
    expect(text).toContain('CYCLE: a → b → config → a');
    expect(text).toContain('b → config: b/two.ts imports config.js');
  });

  it('passes the same tree once the back edge is gone', () => {
    const graph = folderGraph(tree({ ...cyclic, 'b/two.ts': 'export const b = 2;\n' }));
    expect(graph.cycles).toEqual([]);
    expect(report(graph)).toContain('No cycle between top-level folders.');
  });

  it('finds a cycle between the domain folders one level down, which the top level cannot see', () => {
    const nested = tree({
      'services/a/one.ts': "import { two } from '../b/two.js';\nexport const one = two;\n",
      'services/b/two.ts': "import type { one } from '../a/one.js';\nexport const two = 2;\nexport type One = typeof one;\n",
      'app.ts': "import { one } from './services/a/one.js';\nexport const app = one;\n",
    });
    const [top, services] = checkedGraphs(nested);
    expect(top!.graph.cycles).toEqual([]);
    expect(services!.folder).toBe('services');
    expect(services!.graph.cycles).toEqual([['a', 'b', 'a']]);
  });

  // src/ itself passing is the first test above; one process is enough to see the exit code.
  it('exits 1 from the command line on a cycle', async () => {
    const script = join(ROOT, 'scripts', 'check-import-cycles.ts');
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', script, tree(cyclic)], { cwd: ROOT });
    await expect(run).rejects.toMatchObject({ code: 1, stdout: expect.stringContaining('CYCLE: a → b → config → a') });
  }, 30_000);
});

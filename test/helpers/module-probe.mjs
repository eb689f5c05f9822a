// Preloaded (node --import) by bench/cli-startup.ts and test/cli/lazy-loading.test.ts to list the files
// a CLI command loads, one URL a line in $CLI_MODULE_PROBE_OUT: ES modules
// through a load hook (they never enter require's cache), CommonJS ones from require's cache at exit.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const out = process.env.CLI_MODULE_PROBE_OUT;
if (out) {
  register('./module-probe-hooks.mjs', import.meta.url);
  const require = createRequire(import.meta.url);
  process.on('exit', () => {
    const cjs = Object.keys(require.cache).map((file) => pathToFileURL(file).href);
    appendFileSync(out, `${cjs.join('\n')}\n`);
  });
}

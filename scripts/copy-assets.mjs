// The build's second step: every file of src/ that TypeScript does not compile (the stylesheets,
// the dashboard's script, the icon) copied to the same place under dist/, where the compiled code
// reads it at run time (web/assets.ts reads ../assets/ beside itself, in src/ as in dist/).
import { cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
cpSync(root('src'), root('dist'), { recursive: true, filter: (path) => !path.endsWith('.ts') });

// The load hook of module-probe.mjs: it runs on the loader's thread and writes each URL as
// it is loaded.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  appendFileSync(process.env.CLI_MODULE_PROBE_OUT, `${url}\n`);
  return nextLoad(url, context);
}

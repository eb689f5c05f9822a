#!/usr/bin/env node
// The CLI runs the TypeScript sources directly through tsx's loader: no build step between
// `npm install` and `npx keyward`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
// -1: a long-running command (serve) that ends on its own signal.
if (code >= 0) process.exitCode = code;

#!/usr/bin/env node
// The CLI runs the compiled JavaScript in dist/ (built by `npm run build`, which `npm install` runs).
import { main } from '../dist/cli/main.js';

const code = await main(process.argv.slice(2));
// -1: a long-running command (serve) that ends on its own signal.
if (code >= 0) process.exitCode = code;

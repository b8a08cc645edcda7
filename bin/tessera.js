#!/usr/bin/env node
// The installed `tessera` command: runs the TypeScript CLI on this Node.js (24+, type stripping).
// The version check comes first, before anything else is loaded.
import './check-node.cjs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
// `tessera serve` runs with the young generation `npm start` gives the server (bench/RESULTS.md, item 21).
const result = spawnSync(process.execPath, ['--max-semi-space-size=8', cli, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exitCode = result.status ?? 1;

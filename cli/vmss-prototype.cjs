#!/usr/bin/env node
// The `vmss-prototype` command (package.json `bin`, `npx vmss-prototype …`): checks the Node.js version
// before the compiled CLI (dist/cli/main.js, or its bundle in dist/cli-bundle/) and its dependencies are
// loaded, then hands over to it.
// dist/ is built by `npm ci` (the `prepare` script) and by `npm run build`; this file is plain CommonJS
// so that it runs, and explains, on any Node.js.
/* global __dirname */
'use strict';

const fs = require('fs');
const path = require('path');
const url = require('url');

const preflight = require('./preflight.cjs');

/** The old generation's growth after a full collection, in percent (growHeapGently). */
const HEAP_GROWING_PERCENT = 50;

preflight.exitUnlessSupported('vmss-prototype');

const root = path.join(__dirname, '..');
const main = path.join(root, 'dist', 'cli', 'main.js');
if (!fs.existsSync(main)) {
  process.stderr.write(
    `vmss-prototype: not built yet (${path.relative(process.cwd(), main) || main} is missing): ` +
      `run \`npm run build\` in ${root}\n`,
  );
  process.exit(2);
}
const stale = newerSource(root, main);
if (stale !== null) {
  process.stderr.write(
    `vmss-prototype: note: ${stale} changed after the last build; run \`npm run build\` to use it\n`,
  );
}
enableCompileCache(root);
growHeapGently();
// The bundle of dist/cli/main.js (cli/bundle-cli.cjs) when it is current: the same code in a few files.
const entry = require('./bundle-cli.cjs').cliEntry(root);
import(url.pathToFileURL(entry).href).catch((error) => {
  process.stderr.write(`vmss-prototype: cannot load ${entry}: ${error && error.message}\n`);
  process.exitCode = 1;
});

/**
 * Node's on-disk compile cache (Node >= 22.1): a command's second run skips compiling the ~1 000 modules
 * it loads (about 0.4 s of CPU). Under `node_modules/.cache/vmss-prototype/` (the dependencies' tools keep
 * theirs there too), or where NODE_COMPILE_CACHE says; NODE_DISABLE_COMPILE_CACHE=1 turns it off. Node
 * checks each entry against the source, so a rebuild never runs stale code; a cache it cannot write is
 * skipped silently.
 */
function enableCompileCache(rootDir) {
  const moduleApi = require('module');
  if (typeof moduleApi.enableCompileCache !== 'function' || process.env.NODE_DISABLE_COMPILE_CACHE) return;
  const dir =
    process.env.NODE_COMPILE_CACHE ||
    path.join(rootDir, 'node_modules', '.cache', 'vmss-prototype', 'compile-cache');
  try {
    moduleApi.enableCompileCache(dir);
  } catch {
    // Best effort: without the cache the command only compiles its modules again.
  }
}

/**
 * V8 grows the old generation up to 4 times what survived the last full collection before it collects
 * again; a command that reads 20 000 nodes turns over much short-lived data, and its RSS followed that
 * garbage, not what it kept (docs/scale.md, "The commands at 20 000 nodes"). V8 reads this flag at every
 * full collection, so setting it here, before the CLI's modules load, applies to the user's command
 * whatever NODE_OPTIONS says; VMSSP_HEAP_GROWING_PERCENT=0 leaves V8's own choice.
 */
function growHeapGently() {
  const percent = process.env.VMSSP_HEAP_GROWING_PERCENT ?? String(HEAP_GROWING_PERCENT);
  if (!/^\d{1,3}$/.test(percent) || Number(percent) > 400) {
    process.stderr.write(
      `vmss-prototype: VMSSP_HEAP_GROWING_PERCENT must be a whole number of percent from 0 to 400, ` +
        `not ${JSON.stringify(percent)}: unset it for ${HEAP_GROWING_PERCENT}, or 0 for V8's own growth\n`,
    );
    process.exit(2);
  }
  if (percent === '0') return;
  require('v8').setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/** A product source file newer than the build (a developer edited it), or null. A few ms: stat only. */
function newerSource(rootDir, built) {
  let builtAt;
  try {
    const info = path.join(rootDir, 'dist', 'tsconfig.tsbuildinfo');
    builtAt = fs.statSync(fs.existsSync(info) ? info : built).mtimeMs;
  } catch {
    return null;
  }
  const pending = ['cli', 'functions', 'shared', 'sim'].map((dir) => path.join(rootDir, dir));
  while (pending.length > 0) {
    const dir = pending.pop();
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.name.endsWith('.ts') && fs.statSync(full).mtimeMs > builtAt) {
        return path.relative(rootDir, full);
      }
    }
  }
  return null;
}

#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js and everything it imports) into dist/cli-bundle/, so that a
// command loads a few files instead of ~2 000 modules: resolving, reading and linking each module was half
// of a refresh's CPU. Code splitting keeps the lazy loading of dist/cli/main.js: `--help` loads one small
// chunk, a refresh the chunks of the Azure and Kubernetes clients.
//
// Run after `tsc -b` (npm run build, and `node cli/preflight.cjs --build` from npm ci). When esbuild is not
// installed (a production install) it does nothing and the launcher runs dist/cli/main.js as before.
/* global __dirname */
'use strict';

const fs = require('fs');
const path = require('path');

const BUNDLE_DIR = path.join('dist', 'cli-bundle');
const ENTRY = 'main.mjs';

/**
 * Left out of the bundle, loaded at run time: @azure/functions-core exists only inside the Functions host
 * (@azure/functions, which durable-functions loads, copes with its absence).
 */
const EXTERNAL = ['@azure/functions-core'];

/**
 * Writes the bundle; returns 0, or 1 when esbuild failed. Skipped when esbuild is missing, and when the
 * bundle is already newer than the last compile (dist/tsconfig.tsbuildinfo).
 */
async function bundleCli(root, options = {}) {
  let esbuild;
  try {
    esbuild = require(require.resolve('esbuild', { paths: [root] }));
  } catch {
    return 0;
  }
  const outdir = path.join(root, BUNDLE_DIR);
  const compiledAt = mtimeMs(path.join(root, 'dist', 'tsconfig.tsbuildinfo'));
  const bundledAt = mtimeMs(path.join(outdir, ENTRY));
  if (!options.force && compiledAt !== undefined && bundledAt !== undefined && bundledAt >= compiledAt)
    return 0;
  // Chunk names carry a content hash: without emptying the folder, old chunks would pile up.
  fs.rmSync(outdir, { recursive: true, force: true });
  try {
    await esbuild.build(buildOptions(root, outdir));
  } catch (error) {
    // The launcher falls back to dist/cli/main.js when the bundle is missing.
    fs.rmSync(outdir, { recursive: true, force: true });
    process.stderr.write(`bundle-cli: ${error && error.message}\n`);
    return 1;
  }
  return 0;
}

/**
 * esbuild's options for the bundle in `outdir` (exported so that a profile can rebuild it with source
 * maps and without minifying, docs/scale.md).
 */
function buildOptions(root, outdir) {
  return {
    absWorkingDir: root,
    entryPoints: { main: path.join(root, 'dist', 'cli', 'main.js') },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    // Whitespace and syntax only: names stay, so a stack trace still says which function failed.
    minifyWhitespace: true,
    minifySyntax: true,
    // The licence comments go to a .LEGAL.txt file beside each chunk that has any: at the end of a
    // chunk, one non-ASCII letter in a licence made V8 hold the whole 4 MB chunk as a two-byte string
    // and Node decode it the slow way (esbuild writes the code itself as ASCII).
    legalComments: 'linked',
    external: EXTERNAL,
    // Bundled CommonJS packages call require; an ES module has none of its own.
    banner: {
      js: "import { createRequire as __vmsspRequire } from 'node:module'; const require = __vmsspRequire(import.meta.url);",
    },
    logLevel: 'warning',
  };
}

/**
 * What the launcher imports: the bundle when it is at least as new as the last compile, else the compiled
 * modules (no bundle yet, a build without esbuild, or a `tsc -b` since the last bundling: never stale code).
 * VMSSP_CLI_BUNDLE=0 asks for the compiled modules (their source maps point at the TypeScript).
 */
function cliEntry(root, env = process.env) {
  const compiled = path.join(root, 'dist', 'cli', 'main.js');
  if (env.VMSSP_CLI_BUNDLE === '0') return compiled;
  const bundle = path.join(root, BUNDLE_DIR, ENTRY);
  const bundledAt = mtimeMs(bundle);
  if (bundledAt === undefined) return compiled;
  const compiledAt = mtimeMs(path.join(root, 'dist', 'tsconfig.tsbuildinfo')) ?? mtimeMs(compiled);
  return compiledAt === undefined || bundledAt >= compiledAt ? bundle : compiled;
}

function mtimeMs(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

module.exports = { bundleCli, buildOptions, cliEntry, BUNDLE_DIR, ENTRY };

if (require.main === module) {
  bundleCli(path.join(__dirname, '..'), { force: process.argv.includes('--force') }).then(
    (code) => (process.exitCode = code),
  );
}

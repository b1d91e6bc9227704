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
 * Node's built-in modules, imported by `require` instead of `import`: an ES module's import of a built-in
 * builds its ESM facade, which reads every export, lazy getters included, and `node:http`'s `WebSocket`
 * getter alone loads Node's own undici (about 50 ms of CPU, for a WebSocket the CLI never opens). The
 * bundled code sees the same module object through esbuild's CommonJS interop, whose getters read a
 * property only when the code does.
 */
const BUILTINS = new Set(require('module').builtinModules);
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(build) {
    build.onResolve({ filter: /^(node:)?[a-z_][a-z0-9_/]*$/ }, (args) => {
      if (args.kind !== 'import-statement' && args.kind !== 'dynamic-import') return undefined;
      const name = args.path.replace(/^node:/, '');
      if (!args.path.startsWith('node:') && !BUILTINS.has(name)) return undefined;
      return { path: `node:${name}`, namespace: 'builtin-by-require' };
    });
    build.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * `typeof FormData !== "undefined" && body instanceof FormData` in the HTTP runtime of the Azure SDKs
 * (@typespec/ts-http-runtime: the form data policy on every request, the REST client on every request with
 * a body) reads the global FormData, whose first read loads Node's built-in undici (about 50 ms of CPU) for
 * a form no request of the product sends. A FormData's Object.prototype.toString tag is "FormData", so
 * asking that first gives the same answer and reads the global only for a body that may be one. A file
 * that no longer holds the check fails the bundling (the launcher then runs the compiled modules).
 */
const FORM_DATA_CHECK = 'typeof FormData !== "undefined" && body instanceof FormData';
const FORM_DATA_FILES =
  /[\\/]@typespec[\\/]ts-http-runtime[\\/]dist[\\/]esm[\\/](formData|client[\\/]sendRequest)\.js$/;
const formDataCheckFirst = {
  name: 'form-data-check-first',
  setup(build) {
    build.onLoad({ filter: FORM_DATA_FILES }, async (args) => {
      const source = await fs.promises.readFile(args.path, 'utf8');
      if (!source.includes(FORM_DATA_CHECK))
        throw new Error(`${args.path} no longer holds \`${FORM_DATA_CHECK}\`: update cli/bundle-cli.cjs`);
      const guarded = `Object.prototype.toString.call(body) === "[object FormData]" && ${FORM_DATA_CHECK}`;
      return { contents: source.replaceAll(FORM_DATA_CHECK, guarded), loader: 'js' };
    });
  },
};

/**
 * @kubernetes/client-node imports undici (the npm package, 0.9 MB of the bundle) at its top level for its
 * own `fetch` and the Agents KubeConfig builds for it; the product sends its Kubernetes requests through
 * `node:https` (shared/adapters/kubernetes/https-library.ts), so evaluating undici, and the built-in
 * modules it requires (node:http2, node:worker_threads, …), at every start-up was wasted (50-80 ms of a
 * refresh's CPU). client-node gets functions that require undici on their first call instead: `new
 * Agent(…)` still returns undici's Agent. A name client-node imports that is not among them fails the
 * bundling ("No matching export").
 */
const LAZY_UNDICI = `let undici;
function load() {
  return (undici ??= require('undici'));
}
export function fetch(...args) {
  return load().fetch(...args);
}
export function Agent(...args) {
  return new (load().Agent)(...args);
}
export function ProxyAgent(...args) {
  return new (load().ProxyAgent)(...args);
}
`;
const lazyUndici = {
  name: 'lazy-undici',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, (args) => {
      if (args.kind !== 'import-statement') return undefined;
      if (!/[\\/]@kubernetes[\\/]client-node[\\/]/.test(args.importer)) return undefined;
      // One module for all of client-node's importers; `require('undici')` resolves from client-node.
      return { path: 'undici', namespace: 'lazy-undici', pluginData: path.dirname(args.importer) };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-undici' }, (args) => ({
      contents: LAZY_UNDICI,
      loader: 'js',
      resolveDir: args.pluginData,
    }));
  },
};

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
    plugins: [builtinsByRequire, formDataCheckFirst, lazyUndici],
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

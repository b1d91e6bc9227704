// The compiled test files and which of them are fast, for `npm test` (tests/run-tiers.mjs) and
// `npm run test:fast` (tests/fast-suite.mjs). A fast file starts no simulator, Azurite, browser or child
// process: every fast file runs in one shared process; each other file runs in a process of its own.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
export const DIST_TESTS = join(ROOT, 'dist', 'tests');

/** Folders of dist/tests whose tests are fast: pure logic, the fakes, the local runner in memory. */
const FAST_FOLDERS = ['shared', 'functions', 'cli', 'docs'];

/** Test files in those folders that are not fast, each with its reason (paths under tests/, no .test.js). */
const SLOW = new Map([
  ['shared/adapters/azure/arm-compute-gateway', "the real ARM client over HTTPS against the simulator's ARM"],
  ['shared/adapters/azure/arm-compute-gateway-wire', 'a scripted HTTPS endpoint, with hung connections'],
  ['shared/adapters/azure/credentials', 'real credential chains waiting out their deadlines'],
  [
    'shared/adapters/azure/key-vault-secrets',
    'a real SecretClient against ports that refuse or never answer',
  ],
  [
    'shared/adapters/kubernetes/client-node-cluster-gateway',
    "the real client against the simulator's API server",
  ],
  [
    'shared/adapters/cluster-api/client-node-machine-pools-sim',
    "the real client against the simulator's management cluster",
  ],
  ['shared/adapters/storage-queue/reboot-queue', 'Azurite'],
  ['functions/simulator-seam', 'the function app against the simulator'],
  ['cli/bundle', 'builds the CLI bundle with esbuild'],
  ['cli/compile-cache', 'starts the CLI in child processes'],
  ['cli/vmss-prototype', 'starts the CLI in child processes'],
  ['cli/zod-jitless', "turns zod's JIT off for its whole process"],
  ['cli/doctor', 'the simulator'],
  ['cli/doctor-capz', 'the simulator'],
  ['cli/interrupt', 'the simulator'],
  ['cli/main', 'the CLI end to end against the simulator'],
  ['cli/missing-scale-set', 'the CLI in child processes against the simulator'],
  ['cli/preconditions', 'the simulator'],
  ['cli/preflight', 'starts node in child processes'],
  ['cli/runner/crash', 'kills and resumes runner child processes'],
  ['cli/status-page', 'serves the status page from a CLI child process against the simulator'],
  ['docs/runbook', "runs the runbook's commands in CLI child processes against the simulator"],
]);

function testFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (entry.name.endsWith('.test.js')) found.push(path);
  }
  return found;
}

/** A test file's key: its path under tests/ without `.test.js` (`cli/doctor`). */
export function keyOf(file) {
  return relative(DIST_TESTS, file)
    .replaceAll('\\', '/')
    .replace(/\.test\.js$/, '');
}

/**
 * Every compiled test file under dist/tests, sorted. A compiled test whose source is gone (dist/ is never
 * cleaned) is not run.
 */
export function allTestFiles() {
  if (!existsSync(DIST_TESTS))
    throw new Error(`${relative(ROOT, DIST_TESTS)} is missing; run \`npx tsc -b\` first`);
  return testFiles(DIST_TESTS)
    .filter((file) => existsSync(join(ROOT, 'tests', `${keyOf(file)}.test.ts`)))
    .sort();
}

/** The fast test files: in FAST_FOLDERS and not listed in SLOW. */
export function fastTestFiles() {
  for (const folder of FAST_FOLDERS) {
    const dir = join(DIST_TESTS, folder);
    if (!existsSync(dir))
      throw new Error(`test:fast: ${relative(ROOT, dir)} is missing; run \`npx tsc -b\` first`);
  }
  return allTestFiles().filter((file) => {
    const key = keyOf(file);
    return FAST_FOLDERS.some((folder) => key.startsWith(`${folder}/`)) && !SLOW.has(key);
  });
}

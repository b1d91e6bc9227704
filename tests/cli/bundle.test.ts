// The CLI's bundle (cli/bundle-cli.cjs): the launcher runs it when it is current, never when a compile is
// newer, and a command run through it decides exactly what the compiled modules decide.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LAUNCHER = join(ROOT, 'cli', 'vmss-prototype.cjs');
const require = createRequire(import.meta.url);
const { bundleCli, cliEntry } = require(join(ROOT, 'cli', 'bundle-cli.cjs')) as {
  bundleCli: (root: string) => Promise<number>;
  cliEntry: (root: string, env: Record<string, string | undefined>) => string;
};

// Preloaded into the command: records every file module it resolves (Node's synchronous resolve hook).
const RESOLVE_RECORDER = `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
const seen = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    if (result.url.startsWith('file:')) seen.add(result.url);
    return result;
  },
});
process.on('exit', () => appendFileSync(process.env.VMSSP_TEST_RESOLVED, [...seen].join('\\n') + '\\n'));
`;

/** A fake project root: which of the bundle, the compiled entry and the build info exist, and when. */
async function fakeRoot(files: Record<string, number>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'vmssp-bundle-entry-'));
  for (const [file, ageSeconds] of Object.entries(files)) {
    const full = join(root, file);
    await mkdir(join(full, '..'), { recursive: true });
    await writeFile(full, '');
    const at = new Date(Date.now() - ageSeconds * 1000);
    await utimes(full, at, at);
  }
  return root;
}

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly resolved: readonly string[];
}

async function runCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-bundle-run-'));
  try {
    const recorder = join(dir, 'recorder.mjs');
    const resolvedFile = join(dir, 'resolved.txt');
    await writeFile(recorder, RESOLVE_RECORDER);
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        [LAUNCHER, ...args],
        {
          cwd: ROOT,
          timeout: 240_000,
          maxBuffer: 16 * 1024 * 1024,
          env: {
            ...env,
            NODE_OPTIONS: `--import=${pathToFileURL(recorder).href}`,
            VMSSP_TEST_RESOLVED: resolvedFile,
          },
        },
        (error, out) => {
          resolve({
            code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
            stdout: out,
          });
        },
      );
    });
    const resolved = (await readFile(resolvedFile, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    return { code, stdout, resolved };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What a plan decided, per pool, without the run's names and times. */
function decisions(stdout: string): string[] {
  const plan = JSON.parse(stdout) as {
    kind: string;
    clusters: { cluster: string; pools: { pool: string; outcome: string; donor?: string }[] }[];
  };
  assert.equal(plan.kind, 'plan');
  return plan.clusters.flatMap((cluster) =>
    cluster.pools.map((pool) => `${cluster.cluster}/${pool.pool}: ${pool.outcome} ${pool.donor ?? ''}`),
  );
}

void describe('the CLI bundle', () => {
  void it('is what the launcher loads only while it is at least as new as the last compile', async () => {
    const bundle = join('dist', 'cli-bundle', 'main.mjs');
    const compiled = join('dist', 'cli', 'main.js');
    const info = join('dist', 'tsconfig.tsbuildinfo');
    const cases: {
      name: string;
      files: Record<string, number>;
      env?: Record<string, string>;
      want: string;
    }[] = [
      {
        name: 'bundled after the compile',
        files: { [compiled]: 60, [info]: 60, [bundle]: 30 },
        want: bundle,
      },
      { name: 'compiled again since', files: { [compiled]: 10, [info]: 10, [bundle]: 30 }, want: compiled },
      { name: 'no bundle (no esbuild)', files: { [compiled]: 60, [info]: 60 }, want: compiled },
      { name: 'no build info', files: { [compiled]: 60, [bundle]: 30 }, want: bundle },
      {
        name: 'VMSSP_CLI_BUNDLE=0',
        files: { [compiled]: 60, [info]: 60, [bundle]: 30 },
        env: { VMSSP_CLI_BUNDLE: '0' },
        want: compiled,
      },
    ];
    for (const testCase of cases) {
      const root = await fakeRoot(testCase.files);
      try {
        assert.equal(cliEntry(root, testCase.env ?? {}), join(root, testCase.want), testCase.name);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    }
  });

  void it('imports no built-in module as an ES module and reads the global FormData only for a form', async () => {
    assert.equal(await bundleCli(ROOT), 0);
    const dir = join(ROOT, 'dist', 'cli-bundle');
    const chunks = (await readdir(dir)).filter((name) => name.endsWith('.mjs'));
    assert.ok(chunks.length > 1);
    const banner = `import { createRequire as __vmsspRequire } from 'node:module';`;
    let guarded = 0;
    for (const name of chunks) {
      const code = (await readFile(join(dir, name), 'utf8')).replace(banner, '');
      // An ESM facade reads every export of its built-in: node:http's WebSocket getter loads Node's undici.
      assert.doesNotMatch(code, /(?:import|from)\s*["']node:/, `${name} imports a built-in module`);
      const checks = code.match(/typeof FormData\s*(?:<|!==?)\s*["']u/g) ?? [];
      const asked = code.match(/"\[object FormData\]"\s*&&\s*typeof FormData/g) ?? [];
      assert.equal(asked.length, checks.length, `${name} reads the global FormData for any body`);
      guarded += asked.length;
    }
    assert.ok(guarded >= 2, "the HTTP runtime's two FormData checks are in the bundle, guarded");
  });

  void it('runs a plan on the embedded simulator that decides what the compiled modules decide', async () => {
    // `npm run build` bundled already (then this does nothing); after a bare `tsc -b` it bundles again.
    assert.equal(await bundleCli(ROOT), 0);
    const env = { ...process.env };
    delete env.VMSSP_CLI_BUNDLE;
    const bundled = await runCli(['plan', '--sim', '--json'], env);
    const compiled = await runCli(['plan', '--sim', '--json'], { ...env, VMSSP_CLI_BUNDLE: '0' });
    assert.equal(bundled.code, 0);
    assert.equal(compiled.code, 0);

    const inBundle = (url: string) => url.includes('/dist/cli-bundle/');
    const inCompiledCli = (url: string) => url.includes('/dist/cli/');
    assert.ok(bundled.resolved.some(inBundle), 'the launcher loaded the bundle');
    assert.deepEqual(bundled.resolved.filter(inCompiledCli), [], 'and none of the compiled CLI modules');
    assert.ok(
      !bundled.resolved.some((url) => url.includes('/node_modules/@kubernetes/client-node/')),
      'the Kubernetes client is inside the bundle, not loaded module by module',
    );
    assert.ok(compiled.resolved.some(inCompiledCli) && !compiled.resolved.some(inBundle));

    assert.deepEqual(decisions(bundled.stdout), decisions(compiled.stdout));
    assert.ok(
      decisions(bundled.stdout).some((line) => line.includes(': planned')),
      'a pool is planned',
    );
  });
});

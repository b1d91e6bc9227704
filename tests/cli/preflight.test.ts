// The Node.js version check every user entry point runs first (cli/preflight.cjs), the launcher behind
// `npx vmss-prototype` (cli/vmss-prototype.cjs), and that package.json routes every entry through them.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PREFLIGHT = join(ROOT, 'cli', 'preflight.cjs');
const LAUNCHER = join(ROOT, 'cli', 'vmss-prototype.cjs');

interface Preflight {
  nodeVersionProblem(version: string): string | null;
  versionMessage(version: string, program: string): string | null;
  MINIMUM_TEXT: string;
}
const preflight = createRequire(import.meta.url)(PREFLIGHT) as Preflight;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(node: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(node, args, { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({
        code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
        stdout,
        stderr,
      });
    });
  });
}

/** A Node.js older than 22.19 installed on this machine (the system's is 20 here), if there is one. */
function olderNode(): string | undefined {
  const candidates = [
    '/usr/bin/node',
    '/usr/local/bin/node',
    ...(process.env['PATH'] ?? '').split(delimiter).map((dir) => join(dir, 'node')),
  ];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      const version = execFileSync(candidate, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
      if (preflight.nodeVersionProblem(version) !== null) return candidate;
    } catch {
      // not there, or not runnable
    }
  }
  return undefined;
}

void describe('nodeVersionProblem', () => {
  const cases: readonly (readonly [string, boolean])[] = [
    ['v20.19.5', false],
    ['v18.20.8', false],
    ['v22.18.9', false],
    ['22.0.0', false],
    ['v22.19.0', true],
    ['v22.23.3', true],
    ['v23.0.0', true],
    ['v24.11.1', true],
    ['v25.2.0', true],
    ['v100.0.0', true],
  ];
  for (const [version, supported] of cases) {
    void it(`${version} is ${supported ? 'supported' : 'too old'}`, () => {
      assert.equal(preflight.nodeVersionProblem(version) === null, supported);
    });
  }

  void it('an unreadable version is a problem, not a crash', () => {
    assert.match(preflight.nodeVersionProblem('banana') ?? '', /cannot read the Node.js version/);
  });
});

void describe('versionMessage', () => {
  void it('is one line that names the minimum, the version found and the fix', () => {
    const message = preflight.versionMessage('v20.19.5', 'vmss-prototype') ?? '';
    assert.equal(message.split('\n').length, 1);
    assert.match(message, /^vmss-prototype: needs Node\.js 22\.19 or newer \(this is Node\.js v20\.19\.5\)/);
    assert.match(message, /install Node\.js 22 or 24/);
    assert.match(message, /npm install --prefix ~\/\.node22 node@22 && export PATH=/);
  });

  void it('is null for a supported version', () => {
    assert.equal(preflight.versionMessage('v24.0.0', 'vmss-prototype'), null);
  });
});

void describe('entry points', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
    bin: Record<string, string>;
    engines: { node: string };
  };

  void it('every script a user runs checks the version before it builds or loads anything', () => {
    for (const script of ['demo', 'sim', 'bench', 'prepare', 'pretest', 'test']) {
      assert.match(manifest.scripts[script] ?? '', /^node cli\/preflight\.cjs\b/, script);
    }
    assert.equal(manifest.scripts['cli'], 'node cli/vmss-prototype.cjs');
  });

  void it('demo and sim rebuild only what changed', () => {
    for (const script of ['demo', 'sim'])
      assert.match(manifest.scripts[script] ?? '', /&& tsc -b &&/, script);
  });

  void it('the bin is the launcher: executable, with a node shebang', () => {
    assert.deepEqual(manifest.bin, { 'vmss-prototype': 'cli/vmss-prototype.cjs' });
    accessSync(LAUNCHER, constants.X_OK);
    assert.match(readFileSync(LAUNCHER, 'utf8'), /^#!\/usr\/bin\/env node\n/);
  });

  void it('engines admits Node 22.19 and later majors', () => {
    assert.equal(manifest.engines.node, '>=22.19.0');
  });

  void it('npm ci refuses an older Node.js before it installs anything (engine-strict)', () => {
    const npmrc = readFileSync(join(ROOT, '.npmrc'), 'utf8');
    assert.match(npmrc, /^engine-strict=true$/m);
  });

  void it('the build says what it does before it starts', async () => {
    const result = await run(process.execPath, [PREFLIGHT, '--build']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr.split('\n')[0] ?? '', /^vmss-prototype: building dist\/ \(tsc -b/);
  });

  void it('on this Node.js the check passes silently', async () => {
    const result = await run(process.execPath, [PREFLIGHT]);
    assert.deepEqual(result, { code: 0, stdout: '', stderr: '' });
  });

  void it('the launcher runs the built CLI', async () => {
    const result = await run(process.execPath, [LAUNCHER, '--version']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^vmss-prototype \d+\.\d+\.\d+\n$/);
  });

  const old = olderNode();
  void it(
    'an older Node.js stops at once with the one-line fix (preflight and launcher)',
    { skip: old === undefined ? 'no Node.js older than 22.19 on this machine' : false },
    async () => {
      for (const entry of [[PREFLIGHT], [PREFLIGHT, '--build'], [LAUNCHER, 'plan', '--sim']]) {
        const result = await run(old ?? '', entry);
        assert.equal(result.code, 1, entry.join(' '));
        assert.equal(result.stdout, '');
        const lines = result.stderr.trimEnd().split('\n');
        assert.equal(lines.length, 1, result.stderr);
        assert.match(lines[0] ?? '', /needs Node\.js 22\.19 or newer \(this is Node\.js v\d+/);
      }
    },
  );
});

/**
 * README.md's install and demo figures come from the commands: the packages `npm ci` skips the install
 * scripts of are exactly those of the lockfile that have one (so npm 11 warns about none), the README
 * names each, `npm test` checks the Node.js version before its `pretest` fetches anything, and the demo's
 * last lines quoted in the README have the shape `cli/demo.ts` prints, at the time factor the simulator
 * session really uses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { readRepoFile } from './docs-files.js';

const README = readRepoFile('README.md');
const manifest = JSON.parse(readRepoFile('package.json')) as {
  scripts: Record<string, string>;
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readRepoFile('package-lock.json')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

/** Names of the locked packages that have an install script (`node_modules/a/node_modules/b` → b). */
function packagesWithInstallScripts(): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
    .sort();
}

void describe('README.md: install', () => {
  void it('allowScripts decides every install script in the lockfile, and denies them', () => {
    const found = packagesWithInstallScripts();
    assert.ok(found.length > 0, 'the lockfile has install scripts to decide');
    assert.deepEqual(
      Object.keys(manifest.allowScripts ?? {}).sort(),
      found,
      'review the new install script, say in README.md why it may be skipped, and list it in allowScripts',
    );
    for (const name of found) assert.equal(manifest.allowScripts?.[name], false, name);
  });

  void it('names each package whose install script is skipped, with its reason', () => {
    for (const name of packagesWithInstallScripts()) {
      assert.match(README, new RegExp(`\\b${name}'s\\s+\`postinstall\`|${name}[^.]*\\bpostinstall\\b`), name);
    }
  });

  void it('npm test refuses an old Node.js before pretest downloads the Bicep CLI', () => {
    assert.match(manifest.scripts['pretest'] ?? '', /^node cli\/preflight\.cjs && /);
    assert.match(manifest.scripts['bicep:install'] ?? '', /install-bicep\.sh/);
  });
});

void describe('README.md: the demo', () => {
  const quoted = /```text\n((?:simulated time .*\n)+)```/.exec(README)?.[1]?.trimEnd().split('\n') ?? [];

  void it('quotes the last line of a run as cli/demo.ts prints it', () => {
    assert.ok(quoted.length > 0, 'the README quotes the demo');
    const source = readRepoFile('cli/demo.ts');
    for (const part of [
      '`\\nsimulated time ${',
      '}, wall time ${',
      '`ARM requests ${',
      '}, Kubernetes requests ${',
    ]) {
      assert.ok(source.includes(part), part);
    }
    for (const line of quoted) {
      assert.match(
        line,
        /^simulated time (?:\d+h)?(?:\d+m)?(?:\d+s)?, wall time \d+s, ARM requests \d+, Kubernetes requests \d+$/,
      );
    }
  });

  void it('states the time factor the simulator session uses', () => {
    const factor = /const DEFAULT_TIME_FACTOR = (\d+);/.exec(readRepoFile('cli/sim-session.ts'))?.[1];
    assert.ok(factor !== undefined);
    assert.match(README, new RegExp(`simulated clock runs ${factor} times faster than wall time`));
  });
});

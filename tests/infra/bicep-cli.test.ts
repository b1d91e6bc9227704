// The pinned Bicep CLI and its lint of infra/: `bicep lint` of every file with infra/bicepconfig.json (any
// error fails), and copies of infra/ with deliberate mistakes that the build, build-params or lint step must
// fail on. The build of the real templates is tested in arm-template.test.ts, which reads its output.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { z } from 'zod';

import {
  BICEP_PROJECT,
  bicepBinary,
  buildToJson,
  describeRun,
  failures,
  formatDiagnostics,
  INSTALL_COMMAND,
  passed,
  pinnedBicepVersion,
  runBicep,
  summary,
} from './bicep-cli.js';
import { readRepoFile, REPO_ROOT } from './repo-files.js';

void describe('the pinned Bicep CLI', () => {
  void it('is the version infra/tools/bicep-cli.csproj pins', async () => {
    const run = await runBicep(['--version']);
    assert.equal(run.exitCode, 0);
    assert.match(
      run.stdout,
      new RegExp(`^Bicep CLI version ${pinnedBicepVersion().replaceAll('.', '\\.')} \\(`),
    );
  });

  void it('is installed by npm run bicep:install and by .ci/run before npm test', () => {
    const scripts = z
      .object({ scripts: z.record(z.string(), z.string()) })
      .parse(JSON.parse(readRepoFile('package.json'))).scripts;
    assert.equal(scripts[INSTALL_COMMAND.replace('npm run ', '')], 'bash infra/tools/install-bicep.sh');
    const ci = readRepoFile('.ci/run');
    const install = ci.indexOf('bash infra/tools/install-bicep.sh');
    assert.ok(
      install !== -1 && install < ci.search(/^npm test$/m),
      '.ci/run installs the Bicep CLI before npm test',
    );
    assert.match(
      readRepoFile(BICEP_PROJECT),
      /<PackageDownload Include="Azure\.Bicep\.CommandLine\.\$\(BicepRuntime\)"/,
    );
  });

  void it('is looked for where the installer puts it, with the install command in the error when it is not there', async () => {
    const root = await mkdtemp(join(tmpdir(), 'vmssp-no-bicep-'));
    try {
      await cp(join(REPO_ROOT, BICEP_PROJECT), join(root, BICEP_PROJECT));
      assert.throws(
        () => bicepBinary(root),
        (error: Error) =>
          error.message.includes(`the Bicep CLI ${pinnedBicepVersion()} is not installed`) &&
          error.message.includes(`run \`${INSTALL_COMMAND}\``),
      );
      assert.ok(bicepBinary().startsWith(join(REPO_ROOT, '.ci', '.bicep')));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

void describe('bicep lint of infra/', () => {
  void it('lints every .bicep and .bicepparam file under infra/ with no error', async (t) => {
    const run = await runBicep(['lint', '--pattern', 'infra/**/*.bicep*']);
    t.diagnostic(summary("bicep lint --pattern 'infra/**/*.bicep*'", run));
    assert.ok(passed(run), describeRun(run));
    const warnings = run.diagnostics.filter((diagnostic) => diagnostic.level !== 'error');
    if (warnings.length > 0) t.diagnostic(`bicep lint warnings:\n${formatDiagnostics(warnings)}`);
  });

  void it('makes the linter rules that guard secrets, endpoints and dead code errors', () => {
    // bicepconfig.json allows // comments; ours are whole lines.
    const text = readFileSync(join(REPO_ROOT, 'infra', 'bicepconfig.json'), 'utf8')
      .split('\n')
      .filter((line) => !line.trim().startsWith('//'))
      .join('\n');
    const rules = z
      .object({
        analyzers: z.object({
          core: z.object({
            enabled: z.literal(true),
            rules: z.record(
              z.string(),
              z.looseObject({ level: z.enum(['off', 'info', 'warning', 'error']) }),
            ),
          }),
        }),
      })
      .parse(JSON.parse(text)).analyzers.core.rules;
    for (const rule of [
      'secure-secrets-in-params',
      'secure-parameter-default',
      'use-secure-value-for-secure-inputs',
      'outputs-should-not-contain-secrets',
      'no-hardcoded-env-urls',
      'no-unused-params',
      'no-unused-vars',
      'no-unused-existing-resources',
      'use-description-params',
    ]) {
      assert.equal(rules[rule]?.level, 'error', rule);
    }
    assert.equal(rules['use-recent-api-versions']?.level, 'warning');
  });
});

void describe('a broken copy of infra/ fails the build or lint step', () => {
  let root = '';

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'vmssp-bicep-broken-'));
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  interface Mistake {
    readonly file: string;
    readonly replace: (source: string) => string;
    /** The diagnostic it must cause, at `file`. */
    readonly code: string;
  }

  /** A fresh copy of infra/ under `root`/<name>/ with the mistakes made. */
  async function brokenCopy(name: string, mistakes: readonly Mistake[]): Promise<string> {
    const copy = join(root, name);
    await cp(join(REPO_ROOT, 'infra'), join(copy, 'infra'), {
      recursive: true,
      filter: (source) => !relative(REPO_ROOT, source).startsWith(join('infra', 'tools')),
    });
    for (const mistake of mistakes) {
      const path = join(copy, mistake.file);
      const original = await readFile(path, 'utf8');
      const changed = mistake.replace(original);
      assert.notEqual(changed, original, `the change applies to ${mistake.file}`);
      await writeFile(path, changed);
    }
    return copy;
  }

  // Each diagnostic below is a failure on its own (an error, or a compiler warning: see `failures`), so
  // mistakes in different places share one compiler run where that saves time; the misspelt property the
  // build step must catch has a copy of its own.
  const cases: readonly {
    readonly name: string;
    readonly step: 'build' | 'build-params' | 'lint';
    readonly mistakes: readonly Mistake[];
  }[] = [
    {
      name: 'a misspelt storage account property',
      step: 'build',
      mistakes: [
        {
          file: 'infra/modules/storage.bicep',
          replace: (source) => source.replace('allowSharedKeyAccess: false', 'allowSharedKeyAcess: false'),
          // Only a warning to the compiler ("did you mean allowSharedKeyAccess?"): `bicep build` exits 0.
          code: 'BCP089',
        },
      ],
    },
    {
      name: 'a property of the wrong type and a parameter the module does not declare',
      step: 'build',
      mistakes: [
        {
          file: 'infra/modules/key-vault.bicep',
          replace: (source) => source.replace('enablePurgeProtection: true', "enablePurgeProtection: 'yes'"),
          code: 'BCP036',
        },
        {
          file: 'infra/main.bicep',
          replace: (source) =>
            source.replace(
              '    skuName: storageSku\n',
              '    skuName: storageSku\n    replication: storageSku\n',
            ),
          code: 'BCP037',
        },
      ],
    },
    {
      name: 'a parameter value of the wrong type in main.bicepparam',
      step: 'build-params',
      mistakes: [
        {
          file: 'infra/main.bicepparam',
          replace: (source) =>
            source.replace('param maxParallelPools = 4', "param maxParallelPools = 'four'"),
          code: 'BCP033',
        },
      ],
    },
    {
      name: 'an unused parameter, an account key in an output and a hard-coded Key Vault host',
      step: 'lint',
      mistakes: [
        {
          file: 'infra/modules/identity.bicep',
          replace: (source) => `${source}\n@description('Left over.')\nparam leftOver string\n`,
          code: 'no-unused-params',
        },
        {
          file: 'infra/modules/storage.bicep',
          replace: (source) => `${source}\noutput accountKey string = account.listKeys().keys[0].value\n`,
          code: 'outputs-should-not-contain-secrets',
        },
        {
          file: 'infra/main.bicep',
          replace: (source) => source.replace('${environment().suffixes.keyvaultDns}', '.vault.azure.net'),
          code: 'no-hardcoded-env-urls',
        },
      ],
    },
  ];

  for (const broken of cases) {
    const codes = broken.mistakes.map((mistake) => mistake.code).join(', ');
    void it(`${broken.name}: ${broken.step} fails with ${codes}`, async () => {
      const copy = await brokenCopy(broken.name.replaceAll(/\W+/g, '-'), broken.mistakes);
      const file = broken.step === 'build-params' ? 'infra/main.bicepparam' : 'infra/main.bicep';
      const run =
        broken.step === 'lint'
          ? await runBicep(['lint', '--pattern', 'infra/**/*.bicep*'], { root: copy })
          : (await buildToJson(file, { root: copy })).run;
      assert.ok(!passed(run), `the ${broken.step} step passed:\n${describeRun(run)}`);
      for (const mistake of broken.mistakes) {
        assert.ok(
          failures(run).some(
            (diagnostic) => diagnostic.code === mistake.code && diagnostic.file === mistake.file,
          ),
          `expected ${mistake.code} in ${mistake.file}:\n${describeRun(run)}`,
        );
      }
    });
  }
});

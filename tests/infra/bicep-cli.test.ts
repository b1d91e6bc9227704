// Compiles, type-checks and lints infra/ with the pinned Bicep CLI: `bicep build` of main.bicep,
// `bicep build-params` of every .bicepparam, `bicep lint` of every file with infra/bicepconfig.json. Any
// compiler diagnostic or error-level lint fails; and a deliberately broken copy of the templates must fail.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
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

function filesUnder(directory: string, suffix: string): string[] {
  return readdirSync(join(REPO_ROOT, directory), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(suffix))
    .map((name) => `${directory}/${name.split('\\').join('/')}`)
    .sort();
}

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

void describe('bicep build, build-params and lint of infra/', () => {
  void it('builds infra/main.bicep with no compiler diagnostic and no error', async (t) => {
    const { run, json } = await buildToJson('infra/main.bicep');
    t.diagnostic(summary('bicep build infra/main.bicep', run));
    assert.ok(passed(run), describeRun(run));
    assert.ok(json !== undefined, 'an ARM template was written');
    const warnings = run.diagnostics.filter((diagnostic) => diagnostic.level !== 'error');
    if (warnings.length > 0) t.diagnostic(`bicep build warnings:\n${formatDiagnostics(warnings)}`);
  });

  const parameterFiles = filesUnder('infra', '.bicepparam');

  void it('has a parameters file to build', () => {
    assert.ok(parameterFiles.includes('infra/main.bicepparam'), parameterFiles.join(', '));
  });

  for (const file of parameterFiles) {
    void it(`builds ${file} against the template it names`, async (t) => {
      const { run, json } = await buildToJson(file);
      t.diagnostic(summary(`bicep build-params ${file}`, run));
      assert.ok(passed(run), describeRun(run));
      const parameters = z.object({ parameters: z.record(z.string(), z.unknown()) }).parse(json).parameters;
      assert.ok(Object.keys(parameters).length > 0);
    });
  }

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

  /** A fresh copy of infra/ under `root`/<name>/ with `replace` applied to one file. */
  async function brokenCopy(
    name: string,
    file: string,
    replace: (source: string) => string,
  ): Promise<string> {
    const copy = join(root, name);
    await cp(join(REPO_ROOT, 'infra'), join(copy, 'infra'), {
      recursive: true,
      filter: (source) => !relative(REPO_ROOT, source).startsWith(join('infra', 'tools')),
    });
    const path = join(copy, file);
    const original = await readFile(path, 'utf8');
    const changed = replace(original);
    assert.notEqual(changed, original, `the change applies to ${file}`);
    await writeFile(path, changed);
    return copy;
  }

  const cases: readonly {
    readonly name: string;
    readonly file: string;
    readonly replace: (source: string) => string;
    readonly step: 'build' | 'build-params' | 'lint';
    readonly code: string;
  }[] = [
    {
      name: 'a misspelt storage account property',
      file: 'infra/modules/storage.bicep',
      replace: (source) => source.replace('allowSharedKeyAccess: false', 'allowSharedKeyAcess: false'),
      step: 'build',
      // Only a warning to the compiler ("did you mean allowSharedKeyAccess?"): `bicep build` still exits 0.
      code: 'BCP089',
    },
    {
      name: 'a storage account property of the wrong type',
      file: 'infra/modules/storage.bicep',
      replace: (source) => source.replace("minimumTlsVersion: 'TLS1_2'", 'minimumTlsVersion: 12'),
      step: 'build',
      code: 'BCP036',
    },
    {
      name: 'a parameter the storage module does not declare',
      file: 'infra/main.bicep',
      replace: (source) =>
        source.replace('    skuName: storageSku\n', '    skuName: storageSku\n    replication: storageSku\n'),
      step: 'build',
      code: 'BCP037',
    },
    {
      name: 'a parameter value of the wrong type in main.bicepparam',
      file: 'infra/main.bicepparam',
      replace: (source) => source.replace('param maxParallelPools = 4', "param maxParallelPools = 'four'"),
      step: 'build-params',
      code: 'BCP033',
    },
    {
      name: 'an unused parameter',
      file: 'infra/modules/identity.bicep',
      replace: (source) => `${source}\n@description('Left over.')\nparam leftOver string\n`,
      step: 'lint',
      code: 'no-unused-params',
    },
    {
      name: 'an account key in an output',
      file: 'infra/modules/storage.bicep',
      replace: (source) => `${source}\noutput accountKey string = account.listKeys().keys[0].value\n`,
      step: 'lint',
      code: 'outputs-should-not-contain-secrets',
    },
    {
      name: 'a hard-coded Key Vault host',
      file: 'infra/main.bicep',
      replace: (source) => source.replace('${environment().suffixes.keyvaultDns}', '.vault.azure.net'),
      step: 'lint',
      code: 'no-hardcoded-env-urls',
    },
  ];

  for (const broken of cases) {
    void it(`${broken.name}: ${broken.step} fails with ${broken.code}`, async () => {
      const copy = await brokenCopy(broken.name.replaceAll(/\W+/g, '-'), broken.file, broken.replace);
      const run =
        broken.step === 'lint'
          ? await runBicep(['lint', join(copy, broken.file)], { root: copy })
          : (await buildToJson(broken.file, { root: copy })).run;
      assert.ok(!passed(run), `the ${broken.step} step passed:\n${describeRun(run)}`);
      assert.ok(
        failures(run).some(
          (diagnostic) => diagnostic.code === broken.code && diagnostic.file === broken.file,
        ),
        `expected ${broken.code} in ${broken.file}:\n${describeRun(run)}`,
      );
    });
  }
});

// Keeps infra/README.md true to the templates: the role table lists exactly compute-actions.json, every
// parameter and output of the compiled template is documented, and the deployment command is the one that
// works.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { z } from 'zod';

import { type ArmTemplate, parseTemplate } from './arm-template.js';
import { mainTemplate, pinnedBicepVersion } from './bicep-cli.js';
import { readRepoFile } from './repo-files.js';

const readme = readRepoFile('infra/README.md');
const actions = z
  .array(z.object({ action: z.string(), why: z.string() }))
  .parse(JSON.parse(readRepoFile('infra/azure/compute-actions.json')));

function section(begin: string, end: string): string {
  const start = readme.indexOf(begin);
  const stop = readme.indexOf(end);
  if (start === -1 || stop === -1 || stop < start) {
    throw new Error(`reading infra/README.md: no section between ${begin} and ${end}`);
  }
  return readme.slice(start + begin.length, stop);
}

/** Rows of a Markdown table whose first cell is a code span: [code, rest of the cells]. */
function codeRows(table: string): (readonly [string, string])[] {
  return table
    .split('\n')
    .map((line) => /^\|\s*`([^`]+)`\s*\|(.*)\|\s*$/.exec(line.trim()))
    .filter((match) => match !== null)
    .map((match) => [match[1] ?? '', (match[2] ?? '').trim()] as const);
}

void describe('infra/README.md', () => {
  const roleRows = codeRows(section('<!-- compute-actions:begin -->', '<!-- compute-actions:end -->'));

  void it('lists exactly the actions of compute-actions.json, in its order', () => {
    assert.deepEqual(
      roleRows.map(([action]) => action),
      actions.map((entry) => entry.action),
    );
  });

  void it('gives each action the reason compute-actions.json gives', () => {
    assert.deepEqual(
      roleRows.map(([action, why]) => `${action}: ${why}`),
      actions.map((entry) => `${entry.action}: ${entry.why}`),
    );
  });

  void it('shows the subscription deployment command', () => {
    assert.ok(
      readme.includes(
        'az deployment sub create --location <region> --template-file infra/main.bicep --parameters infra/main.bicepparam',
      ),
    );
  });

  void it('shows how to install the Kubernetes side and store the token', () => {
    assert.ok(readme.includes('kubectl apply -k infra/kubernetes'));
    assert.match(
      readme,
      /kubectl -n vmss-prototype get secret vmss-prototype-token -o jsonpath='\{\.data\.token\}'/,
    );
    assert.match(readme, /az keyvault secret set --vault-name "\$VAULT" --name \S+-token/);
  });

  const documented = codeRows(section('## Parameters', '## App settings')).map(([name]) => name);
  let main: ArmTemplate;

  before(async () => {
    main = parseTemplate(await mainTemplate());
  });

  void it('documents every parameter of the compiled template, and no other', () => {
    assert.deepEqual([...documented].sort(), Object.keys(main.parameters).sort());
  });

  void it('names every output', () => {
    const outputs = section('Outputs:', 'None is a secret');
    for (const name of Object.keys(main.outputs)) assert.ok(outputs.includes(`\`${name}\``), name);
  });

  void it('names the pinned Bicep version and the command that installs it', () => {
    assert.ok(readme.includes(`Bicep CLI ${pinnedBicepVersion()}`), `Bicep CLI ${pinnedBicepVersion()}`);
    assert.ok(readme.includes('npm run bicep:install'));
  });
});

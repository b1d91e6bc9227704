/** Tests of the action-list authorizer and of infra/azure/compute-actions.json itself. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import {
  actionListAuthorizer,
  createActionListAuthorizer,
  loadComputeActions,
} from '../../../sim/arm/action-authorizer.js';

function writeActions(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'actions-')), 'compute-actions.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const invalidFiles: { name: string; content: unknown; message: RegExp }[] = [
  {
    name: 'a wildcard',
    content: [{ action: 'Microsoft.Compute/snapshots/*', why: 'everything on snapshots' }],
    message: /without wildcards/,
  },
  {
    name: 'another provider',
    content: [{ action: 'Microsoft.Storage/storageAccounts/read', why: 'read the storage account' }],
    message: /Microsoft\.Compute action/,
  },
  {
    // Network and identity actions only as a scale set creation's linked checks (join, assign).
    name: 'a network action that is no linked join',
    content: [{ action: 'Microsoft.Network/virtualNetworks/subnets/write', why: 'change the subnet' }],
    message: /linked check/,
  },
  {
    name: 'an identity action other than assign',
    content: [{ action: 'Microsoft.ManagedIdentity/userAssignedIdentities/write', why: 'make an identity' }],
    message: /linked check/,
  },
  {
    name: 'a duplicate (case-insensitive)',
    content: [
      { action: 'Microsoft.Compute/disks/read', why: 'read the OS disk' },
      { action: 'microsoft.compute/disks/read', why: 'read the OS disk again' },
    ],
    message: /duplicate action/,
  },
  { name: 'a missing why', content: [{ action: 'Microsoft.Compute/disks/read' }], message: /why/ },
  { name: 'not an array', content: { action: 'Microsoft.Compute/disks/read' }, message: /expected array/ },
];

describe('loadComputeActions', () => {
  for (const testCase of invalidFiles) {
    it(`refuses a file with ${testCase.name}`, () => {
      const file = writeActions(testCase.content);

      assert.throws(() => loadComputeActions(file), testCase.message);
    });
  }

  it('loads infra/azure/compute-actions.json: Compute actions and a creation’s linked checks, each with a reason', () => {
    const actions = loadComputeActions('infra/azure/compute-actions.json');

    assert.ok(actions.length > 0);
    assert.ok(actions.some((entry) => entry.action === 'Microsoft.Compute/galleries/images/versions/write'));
    // A scale set is deleted only as the run's temporary canary scale set, known by its tags.
    const scaleSetDelete = actions.find((entry) => entry.action.endsWith('/virtualMachineScaleSets/delete'));
    assert.match(scaleSetDelete?.why ?? '', /canary scale set.*canary-scale-set.*never a pool's scale set/);
    // Outside Microsoft.Compute: exactly the linked checks of creating the canary scale set.
    assert.deepEqual(
      actions
        .map((entry) => entry.action)
        .filter((action) => !action.startsWith('Microsoft.Compute/'))
        .sort(),
      [
        'Microsoft.ManagedIdentity/userAssignedIdentities/assign/action',
        'Microsoft.Network/loadBalancers/backendAddressPools/join/action',
        'Microsoft.Network/virtualNetworks/subnets/join/action',
      ],
    );
  });
});

describe('actionListAuthorizer', () => {
  it('allows listed actions case-insensitively and records used and denied actions', () => {
    const authorizer = actionListAuthorizer(['Microsoft.Compute/snapshots/write']);

    assert.equal(authorizer('microsoft.compute/SNAPSHOTS/write', '/subscriptions/s'), true);
    assert.equal(authorizer('Microsoft.Compute/snapshots/delete', '/subscriptions/s'), false);
    assert.deepEqual(authorizer.used(), ['Microsoft.Compute/snapshots/write']);
    assert.deepEqual(authorizer.denied(), ['Microsoft.Compute/snapshots/delete']);
  });

  it('builds from a file', () => {
    const authorizer = createActionListAuthorizer(
      writeActions([{ action: 'Microsoft.Compute/disks/read', why: 'read the OS disk before the snapshot' }]),
    );

    assert.deepEqual(authorizer.allowed, ['Microsoft.Compute/disks/read']);
    assert.equal(authorizer('Microsoft.Compute/disks/read', '/'), true);
  });
});

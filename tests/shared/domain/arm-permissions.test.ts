/** Azure RBAC evaluation of the caller's permission blocks: wildcards, notActions, scopes. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  actionMatches,
  grantOf,
  missingActions,
  type PermissionBlock,
  requiredActionsFor,
  scopeOfAction,
} from '../../../shared/domain/arm-permissions.js';

const SNAPSHOT_WRITE = 'Microsoft.Compute/snapshots/write';

void describe('actionMatches', () => {
  const cases: readonly (readonly [pattern: string, action: string, matches: boolean])[] = [
    [SNAPSHOT_WRITE, SNAPSHOT_WRITE, true],
    ['microsoft.compute/SNAPSHOTS/write', SNAPSHOT_WRITE, true],
    ['Microsoft.Compute/snapshots/read', SNAPSHOT_WRITE, false],
    ['Microsoft.Compute/snapshots/write', 'Microsoft.Compute/snapshots/write/extra', false],
    ['*', SNAPSHOT_WRITE, true],
    ['Microsoft.Compute/*', SNAPSHOT_WRITE, true],
    ['Microsoft.Compute/*', 'Microsoft.Network/virtualNetworks/read', false],
    ['*/read', 'Microsoft.Compute/galleries/images/versions/read', true],
    ['*/read', SNAPSHOT_WRITE, false],
    ['Microsoft.Compute/*/write', SNAPSHOT_WRITE, true],
    ['Microsoft.Compute/*/write', 'Microsoft.Compute/snapshots/delete', false],
    ['Microsoft.Compute/virtualMachines/*', 'Microsoft.Compute/virtualMachines/runCommand/action', true],
    [
      'Microsoft.Compute/virtualMachines/*',
      'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/runCommand/action',
      false,
    ],
    ['Microsoft.Compute/*/runCommand/action', 'Microsoft.Compute/virtualMachines/runCommand/action', true],
    ['*write', SNAPSHOT_WRITE, true],
    ['Microsoft.*.*', SNAPSHOT_WRITE, false],
  ];
  for (const [pattern, action, matches] of cases) {
    void it(`${pattern} ${matches ? 'matches' : 'does not match'} ${action}`, () => {
      assert.equal(actionMatches(pattern, action), matches);
    });
  }
});

void describe('grantOf and missingActions', () => {
  const contributorLike: PermissionBlock = {
    actions: ['*'],
    notActions: ['Microsoft.Authorization/*/write'],
  };
  const computeButNoDelete: PermissionBlock = {
    actions: ['Microsoft.Compute/*'],
    notActions: ['Microsoft.Compute/*/delete'],
  };
  const readOnly: PermissionBlock = { actions: ['*/read'], notActions: [] };
  const snapshotDelete: PermissionBlock = { actions: ['Microsoft.Compute/snapshots/delete'], notActions: [] };
  const cases: {
    name: string;
    blocks: PermissionBlock[];
    required: string[];
    missing: string[];
  }[] = [
    {
      name: 'no role assignment grants nothing',
      blocks: [],
      required: [SNAPSHOT_WRITE],
      missing: [SNAPSHOT_WRITE],
    },
    { name: 'everything', blocks: [contributorLike], required: [SNAPSHOT_WRITE], missing: [] },
    {
      name: 'a notAction takes the delete away',
      blocks: [computeButNoDelete],
      required: [SNAPSHOT_WRITE, 'Microsoft.Compute/snapshots/delete'],
      missing: ['Microsoft.Compute/snapshots/delete'],
    },
    {
      name: "one role's notActions never remove what another role grants",
      blocks: [computeButNoDelete, snapshotDelete],
      required: ['Microsoft.Compute/snapshots/delete', 'Microsoft.Compute/galleries/images/versions/delete'],
      missing: ['Microsoft.Compute/galleries/images/versions/delete'],
    },
    {
      name: 'a reader has the reads only',
      blocks: [readOnly],
      required: ['Microsoft.Compute/snapshots/read', SNAPSHOT_WRITE],
      missing: [SNAPSHOT_WRITE],
    },
  ];
  for (const { name, blocks, required, missing } of cases) {
    void it(name, () => {
      assert.deepEqual(missingActions(required, blocks), missing);
    });
  }

  void it('names the pattern that grants', () => {
    assert.deepEqual(grantOf(SNAPSHOT_WRITE, [readOnly, computeButNoDelete]), {
      pattern: 'Microsoft.Compute/*',
    });
  });
});

void describe('scopes and capture modes', () => {
  void it('gallery actions are needed on the gallery resource group, the rest on the scale set one', () => {
    assert.equal(scopeOfAction('Microsoft.Compute/galleries/images/versions/write'), 'gallery');
    assert.equal(scopeOfAction('Microsoft.Compute/locations/capsOperations/read'), 'gallery');
    assert.equal(scopeOfAction(SNAPSHOT_WRITE), 'scale-set');
    assert.equal(scopeOfAction('Microsoft.Compute/locations/operations/read'), 'scale-set');
  });

  void it('an action of one capture mode is only required in that mode', () => {
    const entries = [
      { action: SNAPSHOT_WRITE, why: 'snapshot' },
      {
        action: 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/runCommand/action',
        why: 'run command',
        captureMode: 'run-command',
      },
      { action: 'Microsoft.Compute/galleries/read', why: 'gallery' },
    ];

    const drain = requiredActionsFor(entries, 'drain-and-stop');
    const runCommand = requiredActionsFor(entries, 'run-command');

    assert.deepEqual(
      drain['scale-set'].map((entry) => entry.action),
      [SNAPSHOT_WRITE],
    );
    assert.deepEqual(
      runCommand['scale-set'].map((entry) => entry.action),
      [SNAPSHOT_WRITE, 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/runCommand/action'],
    );
    assert.deepEqual(
      drain.gallery.map((entry) => entry.action),
      ['Microsoft.Compute/galleries/read'],
    );
  });
});

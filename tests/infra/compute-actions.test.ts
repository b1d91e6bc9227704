// Checks infra/azure/compute-actions.json, the one list of Microsoft.Compute actions the custom role grants.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { z } from 'zod';

import { readRepoFile } from './repo-files.js';

/** `captureMode`: the action is only needed with that capture mode (`vmss-prototype doctor` checks it only then). */
const ComputeAction = z.strictObject({
  action: z.string(),
  why: z.string(),
  captureMode: z.enum(['drain-and-stop', 'run-command']).optional(),
});
const ComputeActions = z.array(ComputeAction).min(1);

/**
 * Microsoft.Compute/<type>[/<name-free subtype>…]/(read|write|delete) or …/<verb>/action: ARM operation
 * syntax, no wildcard, no placeholder.
 */
const ACTION = /^Microsoft\.Compute(?:\/[a-z][A-Za-z]*)+\/(?:read|write|delete|[a-z][A-Za-z]*\/action)$/;

/**
 * The only other actions: the linked access checks of creating the canary scale set (join a subnet or a
 * load balancer's backend pool, assign a user-assigned identity), which ARM makes on the resources a new
 * scale set's model names.
 */
const LINKED_ACTIONS = [
  'Microsoft.Network/virtualNetworks/subnets/join/action',
  'Microsoft.Network/loadBalancers/backendAddressPools/join/action',
  'Microsoft.ManagedIdentity/userAssignedIdentities/assign/action',
];

const entries = ComputeActions.parse(JSON.parse(readRepoFile('infra/azure/compute-actions.json')));

void describe('infra/azure/compute-actions.json', () => {
  for (const entry of entries) {
    void it(`${entry.action} is a Microsoft.Compute action (or a linked check) with a reason`, () => {
      if (LINKED_ACTIONS.includes(entry.action)) assert.match(entry.why, /canary scale set/);
      else assert.match(entry.action, ACTION);
      assert.ok(!entry.action.includes('*'));
      assert.ok(entry.why.trim().length >= 10, 'the reason is a sentence');
      assert.equal(entry.why, entry.why.trim());
    });
  }

  void it('lists each action once', () => {
    const lower = entries.map((entry) => entry.action.toLowerCase());
    assert.equal(new Set(lower).size, lower.length);
  });

  // Disks: live capture deletes its own copy disk; ARM refuses to delete an attached disk, so OS disks
  // and attached volumes stay out of reach (infra/README.md, "What the custom role grants and why").
  // Machines: only the canary's own instances are deleted (the test below). Scale sets: only the canary
  // scale set a run made, by its tags (the test after it).
  void it('grants no delete on galleries', () => {
    const forbidden = [
      'Microsoft.Compute/virtualMachineScaleSets/delete/action',
      'Microsoft.Compute/galleries/delete',
      'Microsoft.Compute/galleries/images/delete',
    ];
    const granted = entries.map((entry) => entry.action);
    assert.deepEqual(
      forbidden.filter((action) => granted.includes(action)),
      [],
    );
  });

  void it('deletes scale sets only for the canary scale set, and says so', () => {
    const deletes = entries.filter((entry) => /\/virtualMachineScaleSets\/delete$/i.test(entry.action));
    assert.deepEqual(
      deletes.map((entry) => entry.action),
      ['Microsoft.Compute/virtualMachineScaleSets/delete'],
    );
    for (const entry of deletes) assert.match(entry.why, /canary scale set.*tags/);
  });

  void it('deletes instances only for the canary gate, and says so', () => {
    // Deleting a machine is the one destructive grant: it exists only to take back the canary instances
    // a run added itself (tests/e2e/canary.test.ts shows the product never deletes anything else).
    const deletes = entries.filter((entry) => /\/virtualMachines\/delete$/i.test(entry.action));
    assert.deepEqual(
      deletes.map((entry) => entry.action),
      [
        'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/delete',
        'Microsoft.Compute/virtualMachines/delete',
      ],
    );
    for (const entry of deletes) assert.match(entry.why, /canary/);
  });
});

void describe('compute action syntax', () => {
  const cases: readonly (readonly [string, boolean])[] = [
    ['Microsoft.Compute/snapshots/read', true],
    ['Microsoft.Compute/virtualMachineScaleSets/virtualMachines/powerOff/action', true],
    ['Microsoft.Compute/locations/capsOperations/read', true],
    ['Microsoft.Compute/*', false],
    ['Microsoft.Compute/snapshots/*', false],
    ['Microsoft.Compute/*/read', false],
    ['Microsoft.Storage/storageAccounts/read', false],
    ['Microsoft.Compute/snapshots', false],
    ['Microsoft.Compute/snapshots/action', false],
    ['microsoft.compute/snapshots/read', false],
    ['Microsoft.Compute/snapshots/read ', false],
  ];
  for (const [action, valid] of cases) {
    void it(`${JSON.stringify(action)} is ${valid ? 'valid' : 'rejected'}`, () =>
      assert.equal(ACTION.test(action), valid));
  }
});

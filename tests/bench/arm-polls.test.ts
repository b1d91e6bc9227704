/**
 * The count of ARM requests without polls counts requests, one by one, and leaves out only operation-status
 * reads, reads during a long-running operation the run started, and a read repeating the one before it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type ArmRequest, splitArmPolls } from './arm-polls.js';

const VM = '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/p';
const SNAPSHOT = '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/snapshots/snap';
const EXTENSIONS = `${VM}/extensions`;

function get(path: string, operation = 'Microsoft.Compute/x/read'): ArmRequest {
  return { method: 'GET', path, operation, status: 200 };
}

function write(method: string, path: string, status: number): ArmRequest {
  return { method, path, operation: 'Microsoft.Compute/x/write', status };
}

const OPERATION_STATUS = get(
  '/subscriptions/s/providers/Microsoft.Compute/locations/westeurope/capsOperations/1',
  'Microsoft.Compute/locations/capsOperations/read',
);

void describe('splitArmPolls', () => {
  const cases: readonly {
    readonly name: string;
    readonly requests: readonly ArmRequest[];
    readonly expected: readonly [excludingPolls: number, status: number, resource: number, repeated: number];
  }[] = [
    { name: 'nothing', requests: [], expected: [0, 0, 0, 0] },
    {
      name: 'distinct reads all count, the same read twice in a row once',
      requests: [get(VM), get(SNAPSHOT), get(VM), get(VM)],
      expected: [3, 0, 0, 1],
    },
    {
      name: 'an operation-status read is a poll',
      requests: [write('PUT', SNAPSHOT, 201), OPERATION_STATUS],
      expected: [1, 1, 0, 0],
    },
    {
      name: 'reads of what an accepted write started are polls, until the run writes again',
      requests: [
        write('PUT', SNAPSHOT, 202),
        get(SNAPSHOT),
        get(`${SNAPSHOT}?$expand=x`),
        write('PATCH', VM, 200),
        get(SNAPSHOT),
      ],
      expected: [3, 0, 2, 0],
    },
    {
      name: 'a synchronous write (200) starts no poll',
      requests: [write('PATCH', VM, 200), get(VM)],
      expected: [2, 0, 0, 0],
    },
    {
      name: "an action's poll reads its resource; a delete's, the list holding it",
      requests: [
        write('POST', `${VM}/virtualMachines/1/start`, 202),
        get(`${VM}/virtualMachines/1?$expand=instanceView`),
        write('DELETE', `${EXTENSIONS}/cse`, 202),
        get(EXTENSIONS),
        get(EXTENSIONS),
      ],
      expected: [2, 0, 3, 0],
    },
    {
      name: 'an operation not yet read stays polled across another write',
      requests: [
        write('PUT', SNAPSHOT, 202),
        write('POST', `${VM}/virtualMachines/1/start`, 202),
        get(SNAPSHOT),
      ],
      expected: [2, 0, 1, 0],
    },
  ];
  for (const { name, requests, expected } of cases) {
    void it(name, () => {
      const split = splitArmPolls(requests);
      assert.deepEqual(
        [split.excludingPolls, split.operationStatusReads, split.resourcePolls, split.repeatedReads],
        expected,
      );
      assert.equal(split.total, requests.length);
    });
  }
});

// Pure helpers over the compute model: which extensions a refreshed model drops, and the types the
// capture mode is judged on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ScaleSetExtension } from '../../../shared/domain/compute.js';
import { extensionTypesOf, removableExtensions } from '../../../shared/domain/compute.js';

const CSE: ScaleSetExtension = {
  name: 'vmssCSE',
  publisher: 'Microsoft.Azure.Extensions',
  type: 'CustomScript',
  provisioningState: 'Succeeded',
};
const HEALTH: ScaleSetExtension = {
  name: 'HealthExtension',
  publisher: 'Microsoft.ManagedServices',
  type: 'ApplicationHealthLinux',
};

void describe('extensionTypesOf', () => {
  const cases: { name: string; extensions: ScaleSetExtension[]; expected: string[] }[] = [
    { name: 'none', extensions: [], expected: [] },
    {
      name: 'publisher/type, in model order',
      extensions: [CSE, HEALTH],
      expected: [
        'Microsoft.Azure.Extensions/CustomScript',
        'Microsoft.ManagedServices/ApplicationHealthLinux',
      ],
    },
    {
      name: 'no publisher: the type alone',
      extensions: [{ ...CSE, publisher: '' }],
      expected: ['CustomScript'],
    },
    { name: 'no type: nothing to judge', extensions: [{ ...CSE, type: '' }], expected: [] },
  ];
  for (const row of cases) {
    void it(row.name, () => {
      assert.deepEqual(extensionTypesOf(row.extensions), row.expected);
    });
  }
});

void describe('removableExtensions', () => {
  const cases: { name: string; extensions: ScaleSetExtension[]; keep: string[]; expected: string[] }[] = [
    {
      name: 'all but the kept type',
      extensions: [CSE, HEALTH],
      keep: ['ApplicationHealthLinux'],
      expected: ['vmssCSE'],
    },
    {
      name: 'kept by publisher/type, case-insensitive',
      extensions: [CSE, HEALTH],
      keep: ['microsoft.azure.extensions/customscript'],
      expected: ['HealthExtension'],
    },
    { name: 'nothing kept', extensions: [CSE], keep: [], expected: ['vmssCSE'] },
  ];
  for (const row of cases) {
    void it(row.name, () => {
      assert.deepEqual(
        removableExtensions(row.extensions, row.keep).map((extension) => extension.name),
        row.expected,
      );
    });
  }

  void it('says which are being deleted already', () => {
    assert.deepEqual(removableExtensions([{ ...CSE, provisioningState: 'Deleting' }], []), [
      { name: 'vmssCSE', deleting: true },
    ]);
  });
});

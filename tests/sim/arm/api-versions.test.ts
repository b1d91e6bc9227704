/** Table tests of the api-version checks per resource-provider surface. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type ApiSurface, checkApiVersion } from '../../../sim/arm/api-versions.js';

const cases: { surface: ApiSurface; version: string | null; expected: string }[] = [
  { surface: 'compute', version: '2026-04-01', expected: 'ok' },
  { surface: 'disk', version: '2026-03-02', expected: 'ok' },
  { surface: 'gallery', version: '2025-12-03', expected: 'ok' },
  { surface: 'gallery', version: '2024-03-03', expected: 'ok' },
  { surface: 'compute', version: null, expected: 'MissingApiVersionParameter' },
  { surface: 'compute', version: '', expected: 'MissingApiVersionParameter' },
  { surface: 'compute', version: '2024-7-1', expected: 'InvalidApiVersionParameter' },
  { surface: 'compute', version: '2026-03-02', expected: 'NoRegisteredProviderFound' },
  { surface: 'disk', version: '2026-04-01', expected: 'NoRegisteredProviderFound' },
  { surface: 'gallery', version: '2030-01-01', expected: 'NoRegisteredProviderFound' },
];

describe('checkApiVersion', () => {
  for (const testCase of cases) {
    it(`${testCase.surface} ${String(testCase.version)} → ${testCase.expected}`, () => {
      const result = checkApiVersion(
        testCase.surface,
        testCase.version,
        'virtualMachineScaleSets',
        'westeurope',
      );

      assert.equal(result.ok ? 'ok' : result.code, testCase.expected);
    });
  }

  it('lists the supported versions in a NoRegisteredProviderFound message', () => {
    const result = checkApiVersion('compute', '2099-01-01', 'virtualMachineScaleSets', 'westeurope');

    assert.ok(!result.ok);
    assert.match(
      result.message,
      /for type 'virtualMachineScaleSets'\. The supported api-versions are '.*2026-04-01/,
    );
  });
});

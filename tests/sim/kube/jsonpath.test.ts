// The JSONPath subset of printer columns, against what kubectl's JSONPath selects.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { findJsonPath } from '../../../sim/kube/jsonpath.js';

const OBJECT = {
  metadata: { name: 'p', labels: { 'app.kubernetes.io/name': 'x' } },
  spec: { pool: 'pool1', zones: ['1', '2'] },
  status: {
    conditions: [
      { type: 'Ready', status: 'True', count: 2 },
      { type: 'Fresh', status: 'False', count: 5 },
    ],
  },
};

void describe('printer column JSONPath', () => {
  const cases: [string, unknown[]][] = [
    ['.spec.pool', ['pool1']],
    ['{.spec.pool}', ['pool1']],
    ['.spec.zones[1]', ['2']],
    ['.spec.zones[-1]', ['2']],
    ['.spec.zones[*]', ['1', '2']],
    ['.spec.missing', []],
    ['.metadata.labels.app\\.kubernetes\\.io/name', ['x']],
    [".metadata.labels['app.kubernetes.io/name']", ['x']],
    ['.status.conditions[?(@.type=="Fresh")].status', ['False']],
    ['.status.conditions[?(@.type!="Fresh")].type', ['Ready']],
    ['.status.conditions[?(@.count>3)].type', ['Fresh']],
    ['.status.conditions[?(@.reason)].type', []],
    ['.status.conditions[*].type', ['Ready', 'Fresh']],
  ];
  for (const [expression, expected] of cases) {
    void it(expression, () => assert.deepEqual(findJsonPath(expression, OBJECT), expected));
  }

  void it('refuses what it does not evaluate, naming the expression', () => {
    assert.throws(() => findJsonPath('..name', OBJECT), /parsing JSONPath \.\.name: recursive descent/);
    assert.throws(() => findJsonPath('.spec.zones[0:1]', OBJECT), /unsupported \[0:1\]/);
  });
});

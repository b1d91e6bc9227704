import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  matchesFields,
  matchesRequirements,
  matchesSelector,
  parseFieldSelector,
  parseLabelSelector,
} from '../../../sim/kube/selectors.js';
import { KubeApiError } from '../../../sim/kube/status.js';
import { nodeObject, runningPod } from './fixtures.js';

const LABELS = { app: 'web', tier: 'front', 'kubernetes.io/os': 'linux' };

void describe('label selector strings', () => {
  const cases: { selector: string; matches: boolean }[] = [
    { selector: '', matches: true },
    { selector: 'app=web', matches: true },
    { selector: 'app==web', matches: true },
    { selector: 'app!=web', matches: false },
    { selector: 'app!=db', matches: true },
    { selector: 'missing!=x', matches: true },
    { selector: 'tier in (front,back)', matches: true },
    { selector: 'tier in (back)', matches: false },
    { selector: 'tier notin (back, side)', matches: true },
    { selector: 'missing notin (x)', matches: true },
    { selector: 'kubernetes.io/os', matches: true },
    { selector: '!kubernetes.io/os', matches: false },
    { selector: '!missing', matches: true },
    { selector: 'app=web, tier in (front), !missing', matches: true },
    { selector: 'app=web,tier=back', matches: false },
  ];
  for (const { selector, matches } of cases) {
    void it(`"${selector}" ${matches ? 'matches' : 'does not match'}`, () => {
      assert.equal(matchesRequirements(LABELS, parseLabelSelector(selector)), matches);
    });
  }

  void it('rejects malformed selectors with 400', () => {
    assert.throws(
      () => parseLabelSelector('app=(web'),
      (error: unknown) => error instanceof KubeApiError && error.code === 400,
    );
  });
});

void describe('structured label selectors', () => {
  const cases: { name: string; selector: Parameters<typeof matchesSelector>[1]; matches: boolean }[] = [
    { name: 'absent selector matches nothing', selector: undefined, matches: false },
    { name: 'empty selector matches everything', selector: {}, matches: true },
    { name: 'matchLabels', selector: { matchLabels: { app: 'web' } }, matches: true },
    {
      name: 'matchExpressions In and DoesNotExist',
      selector: {
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['front'] },
          { key: 'gpu', operator: 'DoesNotExist' },
        ],
      },
      matches: true,
    },
    {
      name: 'matchExpressions NotIn',
      selector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] },
      matches: false,
    },
  ];
  for (const { name, selector, matches } of cases) {
    void it(name, () => {
      assert.equal(matchesSelector(LABELS, selector), matches);
    });
  }
});

void describe('field selectors', () => {
  const node = nodeObject('n1');
  const cordoned = { ...nodeObject('n2'), spec: { unschedulable: true } };
  const pod = runningPod('apps', 'p', 'n1');
  const cases: {
    name: string;
    object: typeof node;
    selector: string;
    supported: string[];
    matches: boolean;
  }[] = [
    {
      name: 'unset unschedulable reads as false',
      object: node,
      selector: 'spec.unschedulable=false',
      supported: ['spec.unschedulable'],
      matches: true,
    },
    {
      name: 'cordoned node',
      object: cordoned,
      selector: 'spec.unschedulable==true',
      supported: ['spec.unschedulable'],
      matches: true,
    },
    {
      name: 'pod on node',
      object: pod,
      selector: 'spec.nodeName=n1',
      supported: ['spec.nodeName', 'status.phase'],
      matches: true,
    },
    {
      name: 'phase inequality',
      object: pod,
      selector: 'spec.nodeName=n1,status.phase!=Running',
      supported: ['spec.nodeName', 'status.phase'],
      matches: false,
    },
  ];
  for (const { name, object, selector, supported, matches } of cases) {
    void it(name, () => {
      assert.equal(matchesFields(object, parseFieldSelector(selector, supported)), matches);
    });
  }

  void it('rejects a field the resource does not index', () => {
    assert.throws(
      () => parseFieldSelector('spec.providerID=x', ['spec.unschedulable']),
      (error: unknown) =>
        error instanceof KubeApiError && error.message === 'field label not supported: spec.providerID',
    );
  });
});

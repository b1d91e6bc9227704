// Table tests for the name rules settings use.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  ANNOTATION_KEY_RULE,
  IDENTIFIER_RULE,
  type NameRule,
  PINNED_IMAGE_RULE,
  QUEUE_NAME_RULE,
  RESOURCE_GROUP_RULE,
  SCALE_SET_RULE,
  TASK_HUB_RULE,
} from '../../../shared/config/names.js';

const D = 'b'.repeat(64);

const CASES: readonly (readonly [string, NameRule, string, boolean])[] = [
  [
    'pinned image with registry and tag',
    PINNED_IMAGE_RULE,
    `myacr.azurecr.io/tools/busybox:1.37@sha256:${D}`,
    true,
  ],
  ['pinned image, Docker Hub short name', PINNED_IMAGE_RULE, `busybox@sha256:${D}`, true],
  ['pinned image with registry port', PINNED_IMAGE_RULE, `localhost:5000/busybox@sha256:${D}`, true],
  ['image without digest', PINNED_IMAGE_RULE, 'busybox:1.37', false],
  ['image with short digest', PINNED_IMAGE_RULE, 'busybox@sha256:abc', false],
  ['image with uppercase repository', PINNED_IMAGE_RULE, `Tools/BusyBox@sha256:${D}`, false],
  ['image with sha512 digest', PINNED_IMAGE_RULE, `busybox@sha512:${D}`, false],
  ['queue name', QUEUE_NAME_RULE, 'vmss-prototype-reboots', true],
  ['queue name too short', QUEUE_NAME_RULE, 'ab', false],
  ['queue name 63', QUEUE_NAME_RULE, 'q'.repeat(63), true],
  ['queue name 64', QUEUE_NAME_RULE, 'q'.repeat(64), false],
  ['queue name leading hyphen', QUEUE_NAME_RULE, '-reboots', false],
  ['task hub', TASK_HUB_RULE, 'vmssPrototype2', true],
  ['task hub 46', TASK_HUB_RULE, `a${'1'.repeat(45)}`, false],
  ['resource group with parentheses', RESOURCE_GROUP_RULE, 'MC_rg(prod)-weu', true],
  ['resource group with unicode letters', RESOURCE_GROUP_RULE, 'grüppe', true],
  ['resource group with a space', RESOURCE_GROUP_RULE, 'my rg', false],
  ['scale set ending in underscore', SCALE_SET_RULE, 'vmss_', true],
  ['scale set ending in hyphen', SCALE_SET_RULE, 'vmss-', false],
  ['identifier', IDENTIFIER_RULE, 'prod-weu-1', true],
  ['identifier ending in hyphen', IDENTIFIER_RULE, 'prod-', false],
  ['annotation key with prefix', ANNOTATION_KEY_RULE, 'weave.works/kured-reboot-in-progress', true],
  ['annotation key without prefix', ANNOTATION_KEY_RULE, 'skip_me.now', true],
  ['annotation key with uppercase prefix', ANNOTATION_KEY_RULE, 'Weave.Works/x', false],
  ['annotation key name of 64', ANNOTATION_KEY_RULE, `a/${'n'.repeat(64)}`, false],
];

void describe('name rules', () => {
  for (const [name, rule, value, valid] of CASES) {
    void it(`${name}: ${valid ? 'accepted' : 'rejected'}`, () => assert.equal(rule.test(value), valid));
  }
});

/** A new node's time to Ready per flavour: our image beats the original, and the world's figures agree. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { KAMINO_OBSERVED } from '../../../sim/contracts.js';
import {
  BOOTSTRAP_FLAVOURS,
  BOOTSTRAP_PARTS,
  newNodeReadySeconds,
  PROVISION_AND_BOOT_SECONDS,
} from '../../../sim/world/bootstrap-timing.js';

void describe('newNodeReadySeconds', () => {
  for (const flavour of BOOTSTRAP_FLAVOURS) {
    void it(`${flavour}: our image skips the install and the pulls, so it is Ready sooner`, () => {
      const { ours, original } = newNodeReadySeconds(flavour);
      const parts = BOOTSTRAP_PARTS[flavour];
      assert.equal(ours, PROVISION_AND_BOOT_SECONDS + parts.joinWarm);
      assert.equal(original, PROVISION_AND_BOOT_SECONDS + parts.install + parts.imagePulls + parts.joinCold);
      assert.ok(ours < original, `${flavour}: ours ${ours} s, original ${original} s`);
    });
  }

  void it('agrees with the latency profile the world joins aks-engine and kubeadm nodes with', () => {
    assert.equal(
      PROVISION_AND_BOOT_SECONDS,
      KAMINO_OBSERVED.instanceStartSeconds + KAMINO_OBSERVED.nodeBootSeconds,
    );
    assert.deepEqual(newNodeReadySeconds('aks-engine'), {
      ours: KAMINO_OBSERVED.newNodeJoinFromPrototypeSeconds,
      original: KAMINO_OBSERVED.newNodeJoinFromMarketplaceSeconds,
    });
    assert.deepEqual(newNodeReadySeconds('kubeadm'), {
      ours: KAMINO_OBSERVED.newNodeJoinFromPrototypeWithKubeadmJoinSeconds,
      original: KAMINO_OBSERVED.newNodeJoinFromMarketplaceSeconds,
    });
  });
});

/**
 * The rate-limit headers of the simulated ARM (sim/arm/throttling.ts) as the real @azure/arm-compute
 * client reads them: ARM's per-principal and global subscription counters and Compute's
 * policy counter fall with each call in their window and are back after it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { PipelineResponse } from '@azure/core-rest-pipeline';

import { type ArmTestWorld, startArmTestWorld } from './arm-test-world.js';

const RG = 'rg-throttling';

void describe('simulated ARM: rate-limit headers through @azure/arm-compute', () => {
  let world: ArmTestWorld;
  const seen: Record<string, string | undefined>[] = [];
  const onResponse = (response: PipelineResponse): void => {
    seen.push({
      reads: response.headers.get('x-ms-ratelimit-remaining-subscription-reads'),
      globalReads: response.headers.get('x-ms-ratelimit-remaining-subscription-global-reads'),
      resource: response.headers.get('x-ms-ratelimit-remaining-resource'),
    });
  };
  const get = (): Promise<unknown> => world.client.virtualMachineScaleSets.get(RG, 'vmss-a', { onResponse });

  before(async () => {
    world = await startArmTestWorld({
      seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'vmss-a', instances: 1 }),
    });
  });

  after(async () => {
    await world.close();
  });

  /** The GetVMScaleSet3Min count of `Microsoft.Compute/GetVMScaleSet3Min;<n>`. */
  function remaining(header: string | undefined): number {
    const match = /^Microsoft\.Compute\/GetVMScaleSet3Min;(\d+)$/.exec(header ?? '');
    assert.ok(match?.[1], `${header ?? '(none)'} names GetVMScaleSet3Min`);
    return Number(match[1]);
  }

  void it('two consecutive GETs show falling counters; after the window they are back', async () => {
    seen.length = 0;
    world.clock.advance(600); // every bucket full

    await get();
    await get();
    world.clock.advance(60);
    await get();

    const [first, second, third] = seen;
    assert.deepEqual(
      [first, second, third].map((response) => [
        response?.reads,
        response?.globalReads,
        remaining(response?.resource),
      ]),
      [
        ['249', '3749', 2399],
        ['248', '3748', 2398],
        ['249', '3749', 2399],
      ],
    );
  });

  void it("Compute's counter comes back only at the next whole minute, not token by token", async () => {
    seen.length = 0;
    world.clock.advance(600);

    await get();
    // Five simulated seconds (five wall milliseconds at the sample's ×60 clock): ARM's per-second bucket is
    // full again; Compute's, refilled per minute, is not.
    world.clock.advance(5);
    await get();

    const [first, second] = seen;
    assert.equal(remaining(first?.resource), 2399);
    assert.equal(remaining(second?.resource), 2398);
    assert.equal(second?.reads, '249');
  });
});

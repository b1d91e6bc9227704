/**
 * The canary boots the model that will be published: on a pool's first refresh (its model still holding
 * the bootstrap customData and extensions), the model each canary instance was built from is compared,
 * field by field (image, customData, extensions by name, publisher, type, version and settings), with the
 * model the run published. The instance's model is the one the simulator keeps per instance, as Azure
 * does (`getInstanceBootModel`), not the scale set's at some later moment. An aks-engine pool (the
 * sample's) in each capture mode, a k3s pool (drain-and-stop and live) and an rke2 pool, whose published
 * models drop their bootstrap, and a kubeadm pool in each of its modes, whose published model keeps it
 * (new nodes still run `kubeadm join`).
 *
 * A pool whose published model drops the bootstrap tests its first version in a temporary canary scale set
 * made from the model as publication will leave it (docs/design.md#canary): its instances are the canaries,
 * and the scale set is gone once the run ends. A kubeadm pool's canaries are added to the pool's own scale
 * set by the pin, which changes only the image: its bootstrap is what publication keeps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { ComputeState } from '../../sim/arm/compute-state.js';
import type { InstanceBootModel, ScaleSetInfo } from '../../sim/arm/compute-types.js';
import type { Harness, ScenarioData } from './harness.js';
import { POOL1, POOL2, startHarness, withKubeadmPool } from './harness.js';

/** What an instance boots with, field by field: image, customData, extensions. */
interface BootModel {
  readonly image: string;
  readonly customData: string | undefined;
  readonly extensions: readonly BootExtension[];
}

/** An extension as it runs on the instance: who publishes it, what it is, with which settings. */
interface BootExtension {
  readonly name: string;
  readonly publisher: string;
  readonly type: string;
  readonly typeHandlerVersion: unknown;
  readonly settings: unknown;
  readonly protectedSettings: unknown;
}

/**
 * The boot model of a model as ARM stores it (the instance's own, or the scale set's after publication),
 * customData included: the simulator keeps what ARM never returns.
 */
function bootModelOf(model: InstanceBootModel, latestVersion: string): BootModel {
  const reference = model.imageReference['id'];
  const id = typeof reference === 'string' ? reference.toLowerCase() : '';
  return {
    // A model on the definition takes `latest`: the version the run published.
    image: id.includes('/versions/') || id === '' ? id : `${id}/versions/${latestVersion}`,
    customData:
      model.customData === undefined ? undefined : Buffer.from(model.customData, 'base64').toString('utf8'),
    extensions: model.extensions
      .map((extension): BootExtension => {
        const properties = (extension['properties'] ?? {}) as Record<string, unknown>;
        return {
          name: String(extension['name']),
          publisher: String(properties['publisher']),
          type: String(properties['type']),
          typeHandlerVersion: properties['typeHandlerVersion'],
          settings: properties['settings'] ?? {},
          protectedSettings: properties['protectedSettings'],
        };
      })
      .sort((a, b) =>
        `${a.publisher}/${a.type}/${a.name}`.localeCompare(`${b.publisher}/${b.type}/${b.name}`),
      ),
  };
}

/** The scale set's stored model as an instance built from it now would keep it. */
function scaleSetBootModel(compute: ComputeState, scaleSetId: string): InstanceBootModel {
  const model = compute.getScaleSetModel(scaleSetId);
  assert.ok(model, scaleSetId);
  const profile = model['virtualMachineProfile'] as Record<string, Record<string, unknown>>;
  const customData = profile['osProfile']?.['customData'];
  const extensions = profile['extensionProfile']?.['extensions'];
  return {
    imageReference: profile['storageProfile']?.['imageReference'] as InstanceBootModel['imageReference'],
    ...(typeof customData === 'string' ? { customData } : {}),
    extensions: Array.isArray(extensions) ? (extensions as InstanceBootModel['extensions']) : [],
  };
}

interface Flavour {
  readonly name: string;
  readonly pool: string;
  readonly mode: 'drain-and-stop' | 'live' | 'run-command';
  readonly scenario?: (scenario: ScenarioData) => void;
  /** The published model drops the bootstrap: the canary boots in a scale set of its own. */
  readonly ownScaleSet: boolean;
}

const FLAVOURS: readonly Flavour[] = [
  {
    name: 'aks-engine, drain-and-stop',
    pool: POOL1,
    mode: 'drain-and-stop',
    ownScaleSet: true,
  },
  {
    name: 'aks-engine, live',
    pool: POOL1,
    mode: 'live',
    ownScaleSet: true,
  },
  {
    name: 'aks-engine, run-command',
    pool: POOL1,
    mode: 'run-command',
    ownScaleSet: true,
  },
  {
    name: 'k3s, drain-and-stop',
    pool: POOL2,
    mode: 'drain-and-stop',
    scenario: (scenario) => {
      const pool = scenario.clusters[0]?.scaleSets.find((scaleSet) => scaleSet['name'] === POOL2);
      assert.ok(pool);
      pool['bootstrapFlavour'] = 'k3s';
    },
    ownScaleSet: true,
  },
  {
    name: 'k3s, live',
    pool: POOL2,
    mode: 'live',
    scenario: (scenario) => {
      const pool = scenario.clusters[0]?.scaleSets.find((scaleSet) => scaleSet['name'] === POOL2);
      assert.ok(pool);
      pool['bootstrapFlavour'] = 'k3s';
    },
    ownScaleSet: true,
  },
  {
    name: 'rke2, drain-and-stop',
    pool: POOL2,
    mode: 'drain-and-stop',
    scenario: (scenario) => {
      const pool = scenario.clusters[0]?.scaleSets.find((scaleSet) => scaleSet['name'] === POOL2);
      assert.ok(pool);
      pool['bootstrapFlavour'] = 'rke2';
    },
    ownScaleSet: true,
  },
  {
    name: 'kubeadm, drain-and-stop',
    pool: POOL2,
    mode: 'drain-and-stop',
    scenario: withKubeadmPool(POOL2),
    ownScaleSet: false,
  },
  { name: 'kubeadm, live', pool: POOL2, mode: 'live', scenario: withKubeadmPool(POOL2), ownScaleSet: false },
];

async function firstRefresh(flavour: Flavour): Promise<{
  canaries: InstanceBootModel[];
  published: InstanceBootModel;
  result: PoolRefreshResult;
  before: ScaleSetInfo;
}> {
  const harness: Harness = await startHarness({
    clock: 'manual',
    ...(flavour.scenario === undefined ? {} : { scenario: flavour.scenario }),
    settings: (cluster) => {
      // Run Command prepares the disk itself: no prep image (tests/e2e/run-command.test.ts).
      cluster.capture =
        flavour.mode === 'run-command'
          ? { mode: 'run-command', drainGracePeriod: '5s' }
          : { ...cluster.capture, mode: flavour.mode };
      cluster['promotion'] = { canary: { soak: '5m', deadline: '20m', afterPass: 'keep' } };
    },
  });
  try {
    const compute = harness.sim.running.world.compute;
    const scaleSet = compute.listScaleSets().find((entry) => entry.name === flavour.pool);
    assert.ok(scaleSet, flavour.pool);
    // Every instance the run adds, to the pool or to a canary scale set made from it, with the model it
    // was built from (each keeps its own, as Azure does), read when it is created: a canary scale set is
    // deleted with its instances before the run ends.
    const canaries: InstanceBootModel[] = [];
    const canaryScaleSets = new Set<string>();
    const stop = compute.subscribe((event) => {
      if (event.type !== 'instance-created') return;
      const owner = compute.getScaleSet(event.instance.scaleSetId);
      const ownScaleSet = owner?.tags['vmss-prototype.source-scale-set'] === flavour.pool;
      if (event.instance.scaleSetId !== scaleSet.id && !ownScaleSet) return;
      if (ownScaleSet && owner !== undefined) canaryScaleSets.add(owner.id);
      const model = compute.getInstanceBootModel(event.instance.id);
      assert.ok(model, `canary ${event.instance.id} has its model`);
      canaries.push(model);
    });
    try {
      const status = await harness.run(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: flavour.pool, trigger: 'test' },
        `canary-model-${flavour.pool}`,
      );
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'refreshed', result.reason);
      assert.equal(canaryScaleSets.size, flavour.ownScaleSet ? 1 : 0, 'canary scale sets made');
      for (const id of canaryScaleSets) assert.equal(compute.getScaleSet(id), undefined, `${id} is deleted`);
      assert.equal(result.canary?.instancesNow, flavour.ownScaleSet ? 'removed' : 'kept');
      return { canaries, published: scaleSetBootModel(compute, scaleSet.id), result, before: scaleSet };
    } finally {
      stop();
    }
  } finally {
    await harness.stop();
  }
}

void describe(
  'the canary boots the model that is published (first refresh)',
  { timeout: 20 * 60_000 },
  () => {
    for (const flavour of FLAVOURS) {
      void it(flavour.name, async () => {
        const { canaries, published, result, before } = await firstRefresh(flavour);
        // The first refresh of a pool whose model holds its bootstrap: customData and a bootstrap extension.
        assert.ok(before.customData !== undefined, 'the pool starts with bootstrap customData');
        assert.ok(before.bootstrapExtensionsRemain, 'the pool starts with bootstrap extensions');
        assert.ok(canaries.length > 0, 'a canary was added');
        const version = result.version?.versionName ?? '';
        const expected = bootModelOf(published, version);
        assert.match(expected.image, new RegExp(`/versions/${version.replaceAll('.', '\\.')}$`));
        for (const canary of canaries) {
          const booted = bootModelOf(canary, version);
          // One comparison of every field, so that a difference shows each field that differs.
          assert.deepEqual(booted, expected, "the canary's model (image, customData, extensions)");
        }
      });
    }
  },
);

/**
 * The canary's watch (canary.phase.ts, capz-canary.phase.ts): the canary instances of one scale set
 * observed until every one passed (joined under its own name, Ready, Ready for the soak, its DaemonSet pods
 * running, the check pod succeeded), one failed, or the deadline passed (shared/domain/canary.ts).
 */
import type { Task } from 'durable-functions';

import type { KnownCanaryInstance } from '../../../shared/application/canary.js';
import type { CanaryVerdict } from '../../../shared/domain/canary.js';
import { EMPTY_CANARY_MEMORY, judgeCanaries } from '../../../shared/domain/canary.js';
import { fnv1a32Hex } from '../../../shared/domain/gallery-naming.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { CanaryProgress } from './canary-state.js';
import type { BuiltVersion } from './image.phase.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/**
 * Watches `progress.instances` of `scaleSet` from `addedAtMs` until the judge decides. `poolNode`: a node
 * of the pool whose label the canaries' nodes carry, for a scale set none of whose members has a node yet
 * (a canary scale set of its own: the donor), so that a canary not yet registered is looked for among the
 * pool's nodes and never by a listing of the whole cluster.
 */
export function* watchCanaries(
  run: RefreshRun,
  version: BuiltVersion,
  scaleSet: ScaleSetRef,
  progress: CanaryProgress,
  addedAtMs: number,
  options: { readonly poolNode?: string } = {},
): Generator<Task, CanaryVerdict, unknown> {
  const { context, cluster, plan } = run;
  const policy = plan.settings.canary;
  setStatus(run, 'testing-canaries', progress.instances.join(', '));
  let memory = EMPTY_CANARY_MEMORY;
  // Canaries ARM reported provisioned and running: looked for in the cluster alone while their nodes join
  // and stay Ready, so a soak of many minutes costs no ARM read. A machine deleted or stopped meanwhile
  // shows in the cluster first (its node NotReady within the node monitor's grace period, then gone):
  // from then on ARM is read again each round, for the state the verdict names.
  const known: Record<string, KnownCanaryInstance> = {};
  return yield* pollUntil(context, {
    step: 'testing-canaries',
    intervalSeconds: POLL.canaryObservation.interval,
    // Canaries just created are still provisioning: the first look is one interval later.
    expectedSeconds: POLL.canaryObservation.interval,
    // The judge fails the canary at its deadline; this bound only stops a judge that never decides.
    timeoutSeconds: policy.deadlineSeconds + (policy.checkPod?.timeoutSeconds ?? 0) + 600,
    read: function* () {
      const allKnown = progress.instances.every((instanceId) => known[instanceId] !== undefined);
      const observations = yield* call(
        context,
        activities.observeCanaries,
        {
          cluster,
          scaleSet,
          instanceIds: progress.instances,
          namespace: plan.settings.prepNamespace,
          checkPods: { ...progress.checkPods },
          ...(allKnown ? { known: { ...known } } : {}),
          ...(options.poolNode === undefined ? {} : { poolNode: options.poolNode }),
        },
        { step: 'testing-canaries' },
      );
      for (const { instanceId, instance, node } of observations) {
        const running =
          instance.exists && instance.provisioningState === 'Succeeded' && instance.powerState === 'running';
        // A canary whose node was Ready and now is missing or not Ready is read from ARM again next round.
        const nodeLost = memory.everReady.includes(instanceId) && node?.ready !== 'True';
        if (
          running &&
          !nodeLost &&
          instance.computerName !== undefined &&
          instance.resourceId !== undefined
        ) {
          known[instanceId] = {
            resourceId: instance.resourceId,
            computerName: instance.computerName,
            ...(instance.poolLabels === undefined ? {} : { poolLabels: { ...instance.poolLabels } }),
          };
        } else {
          delete known[instanceId];
        }
      }
      const judgement = judgeCanaries({
        observations,
        memory,
        policy,
        startedAtMs: addedAtMs,
        nowMs: context.df.currentUtcDateTime.getTime(),
      });
      memory = judgement.memory;
      progress.observations = observations;
      return judgement.verdict;
    },
    done: (current) => current.kind !== 'waiting',
    nextDelaySeconds: (current) =>
      current.kind === 'waiting' ? current.nextObservationInSeconds : undefined,
    between: function* (current) {
      if (current.kind !== 'waiting') return;
      setStatus(run, 'testing-canaries', current.progress);
      if (policy.checkPod === undefined) return;
      for (const instanceId of current.startCheckPods) {
        const node = progress.observations.find((entry) => entry.instanceId === instanceId)?.node?.name;
        if (node === undefined) continue;
        const name = checkPodNameOf(run, version.versionName, instanceId);
        progress.checkPods[instanceId] = name;
        yield* call(
          context,
          activities.startCheckPod,
          {
            cluster,
            namespace: plan.settings.prepNamespace,
            name,
            node,
            image: policy.checkPod.image,
            command: [...policy.checkPod.command],
            args: [...policy.checkPod.args],
            env: policy.checkPod.env.map((entry) => ({ ...entry })),
            deadlineSeconds: policy.checkPod.timeoutSeconds,
            version: version.versionName,
          },
          { step: 'testing-canaries' },
        );
      }
    },
    describe: (current) => (current.kind === 'waiting' ? current.progress : current.kind),
  });
}

/** Check pod names: DNS labels, unique per pool, version and instance. */
function checkPodNameOf(run: RefreshRun, versionName: string, instanceId: string): string {
  const hash = fnv1a32Hex(`${run.plan.scaleSet.id.toLowerCase()}/${instanceId}`);
  return `vmssp-check-${versionName.replaceAll('.', '-')}-${hash}`.toLowerCase().slice(0, 63);
}

/**
 * The canary of a CAPZ pool (docs/capz.md): the real pool's template is never touched before the version
 * passed (CAPZ would roll every machine onto an untested image). Instead a temporary canary pool — a
 * KubeadmConfig, AzureMachinePool and MachinePool cloned from the pool's, carrying the version — makes CAPZ
 * build its own scale set; its machines are judged like any canary (canary-watch.ts), and the canary
 * pool is deleted whatever the verdict. Passed: the version is published and the real template changes
 * (`publish`). Rejected: the version is marked rejected and stays hidden; the pool is untouched.
 */
import type { Task } from 'durable-functions';

import type { CanaryVerdict } from '../../../shared/domain/canary.js';
import { capzCanaryNameOf } from '../../../shared/domain/cluster-api.js';
import { CANARY_RUN_LABEL } from '../../../shared/domain/cluster-api-labels.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import type { StepFailure } from '../step-failure.js';
import { asStepFailure } from '../step-failure.js';
import { POLL, RESTORE_RETRY } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { CanaryPhaseOutput } from './canary.phase.js';
import { deleteCheckPods, drainCanaryNodes } from './canary-cleanup.js';
import type { CanaryProgress } from './canary-state.js';
import { newCanaryProgress } from './canary-state.js';
import { watchCanaries } from './canary-watch.js';
import { capzImageOf, capzOf } from './capz.phase.js';
import type { BuiltVersion } from './image.phase.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';
import { concludeSeparateCanary } from './separate-canary.js';

export function* capzCanaryPhase<Published>(
  run: RefreshRun,
  version: BuiltVersion,
  publish: () => Generator<Task, Published, unknown>,
): Generator<Task, CanaryPhaseOutput<Published>, unknown> {
  const { context, cluster, plan } = run;
  const capz = capzOf(run);
  const policy = plan.settings.canary;
  const name = capzCanaryNameOf(capz.azureMachinePool, run.runId);
  const scaleSet: ScaleSetRef = {
    subscriptionId: plan.scaleSet.subscriptionId,
    resourceGroup: plan.scaleSet.resourceGroup,
    name,
  };
  const startedAtMs = context.df.currentUtcDateTime.getTime();
  const progress: CanaryProgress = newCanaryProgress();
  let verdict: CanaryVerdict | undefined;
  let failure: StepFailure | undefined;
  try {
    setStatus(
      run,
      'adding-capz-canary',
      `canary pool ${capz.namespace}/${name}, ${policy.instances} machine(s)`,
    );
    progress.scaleOutRequested = true;
    yield* call(
      context,
      activities.createCapzCanary,
      {
        cluster,
        namespace: capz.namespace,
        source: { machinePool: capz.machinePool, azureMachinePool: capz.azureMachinePool },
        name,
        replicas: policy.instances,
        image: capzImageOf(version),
        // The adapter adds the canary-of label (the source MachinePool) to every object.
        labels: { [CANARY_RUN_LABEL]: run.runId },
        fence: run.fence,
      },
      { step: 'adding-capz-canary' },
    );
    const machines = yield* pollUntil(context, {
      step: 'adding-capz-canary',
      expectedSeconds: POLL.capzCanary.interval,
      intervalSeconds: POLL.capzCanary.interval,
      timeoutSeconds: POLL.capzCanary.timeout,
      advice:
        "CAPZ did not create the canary pool's machines: check the canary AzureMachinePool's conditions",
      read: () =>
        call(
          context,
          activities.listCapzMachines,
          { cluster, namespace: capz.namespace, azureMachinePool: name },
          { step: 'adding-capz-canary' },
        ),
      // A machine just created has no instance id yet: counted once it has one.
      done: (list) => withInstance(list).length >= policy.instances,
      describe: (list) => `${withInstance(list).length} of ${policy.instances} canary machine(s) created`,
    });
    progress.instances = withInstance(machines).map((machine) => machine.instanceId);
    verdict = yield* watchCanaries(run, version, scaleSet, progress, context.df.currentUtcDateTime.getTime());
  } catch (error) {
    failure = asStepFailure('testing-canaries', error);
  }
  // The canary pool goes whatever happened (never interrupted by a cancel).
  yield* shielded(context, removeCapzCanary(run, name, progress));
  const seconds = Math.round((context.df.currentUtcDateTime.getTime() - startedAtMs) / 1000);
  return yield* concludeSeparateCanary(run, version, publish, {
    verdict,
    failure,
    instances: progress.instances,
    seconds,
    untouched: 'the AzureMachinePool template was not touched, the canary pool is gone',
  });
}

function withInstance<T extends { readonly instanceId: string }>(list: readonly T[]): T[] {
  return list.filter((machine) => machine.instanceId !== '');
}

/** Deletes the canary pool and waits until CAPZ removed its machines. */
function* removeCapzCanary(
  run: RefreshRun,
  name: string,
  progress: CanaryProgress,
): Generator<Task, void, unknown> {
  const { context, cluster } = run;
  const capz = capzOf(run);
  const step = 'removing-capz-canary';
  setStatus(run, step, `canary pool ${capz.namespace}/${name}`);
  yield* deleteCheckPods(run, progress);
  // Deleting the pool deletes its instances without a drain (docs/capz.md): the run drains them first.
  yield* drainCanaryNodes(run, progress, step);
  yield* pollUntil(context, {
    step,
    expectedSeconds: 0,
    intervalSeconds: POLL.capzCanary.interval,
    timeoutSeconds: POLL.capzCanary.timeout,
    read: () =>
      call(
        context,
        activities.deleteCapzCanary,
        { cluster, namespace: capz.namespace, name },
        { step, retry: RESTORE_RETRY },
      ),
    done: (result) => result.gone,
    describe: () => `canary pool ${name} still has machines`,
  });
  noteGivenBack(context, `the canary pool ${capz.namespace}/${name} (deleted)`);
}

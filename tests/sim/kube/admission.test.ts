/**
 * Per-kind admission (sim/kube/admission.ts) through real clients against `startSimulator` with
 * sim/scenarios/capz.yaml: Lease MicroTimes, spec and unconditional PUTs as the API server refuses them
 * (kubectl and client-node's CoordinationV1Api), the AzureMachinePool CRD's required fields and CAPZ's
 * webhook, and Cluster API's MachinePool webhook (kubectl).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ApiException, CoordinationV1Api, KubeConfig, V1MicroTime } from '@kubernetes/client-node';

import { CAPZ_SCENARIO, type RunningSimulator, startSimulator } from '../../../sim/index.js';
import { loadScenarioFile } from '../../../sim/world/scenario.js';

const POOL = 'capz-lab-mp-0';

void describe('admission of Leases and Cluster API objects', () => {
  let sim: RunningSimulator;
  let outDir: string;
  let leases: CoordinationV1Api;

  function kubectl(
    args: readonly string[],
    input?: string,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('kubectl', ['--context', 'mgmt-sim-admin', ...args], {
        env: { ...process.env, KUBECONFIG: sim.kubeconfigPath, HOME: outDir },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(input ?? '');
    });
  }

  async function apply(object: Record<string, unknown>): Promise<{ code: number | null; stderr: string }> {
    const file = join(outDir, `object-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify(object));
    return kubectl(['create', '-f', file]);
  }

  void before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'vmss-sim-admission-'));
    const scenario = await loadScenarioFile(CAPZ_SCENARIO);
    scenario.latency = { ...scenario.latency, profile: 'fast' };
    sim = await startSimulator({
      scenario,
      outDir,
      clock: 'manual',
      startMs: Date.parse('2026-11-22T12:00:00Z'),
    });
    const config = new KubeConfig();
    config.loadFromFile(sim.kubeconfigPath);
    config.setCurrentContext('mgmt-sim-admin');
    leases = config.makeApiClient(CoordinationV1Api);
  });

  void after(async () => {
    await sim.stop();
    await rm(outDir, { recursive: true, force: true });
  });

  function lease(name: string, spec: Record<string, unknown>): Record<string, unknown> {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'default' },
      spec: { holderIdentity: 'run-1', leaseDurationSeconds: 60, ...spec },
    };
  }

  void it('a Lease time without six fractional digits cannot be decoded (400)', async () => {
    const result = await apply(lease('seconds-only', { renewTime: '2026-11-22T12:00:00Z' }));

    assert.notEqual(result.code, 0);
    assert.match(
      result.stderr,
      /Lease in version "v1" cannot be handled as a Lease: parsing time "2026-11-22T12:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"/,
    );
    const millis = await apply(lease('millis', { renewTime: '2026-11-22T12:00:00.123Z' }));
    assert.match(millis.stderr, /cannot parse ".123Z" as ".000000"/);
    const ok = await apply(lease('micros', { renewTime: '2026-11-22T12:00:00.123456Z' }));
    assert.equal(ok.code, 0, ok.stderr);
  });

  void it('a Lease with leaseDurationSeconds -1 or negative transitions is invalid (422)', async () => {
    const result = await apply(lease('negative', { leaseDurationSeconds: -1, leaseTransitions: -2 }));

    // kubectl prints an Invalid Status from its causes, one line each.
    assert.match(result.stderr, /The Lease "negative" is invalid: \n/);
    assert.match(result.stderr, /\* spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0\n/);
    assert.match(
      result.stderr,
      /\* spec.leaseTransitions: Invalid value: -2: must be greater than or equal to 0/,
    );
  });

  void it('a Lease PUT without a resourceVersion is refused; with the one read, it is written', async () => {
    const created = await leases.createNamespacedLease({
      namespace: 'default',
      body: {
        metadata: { name: 'unconditional' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 30, renewTime: new V1MicroTime(Date.now()) },
      },
    });
    const body = { metadata: { name: 'unconditional' }, spec: { ...created.spec, holderIdentity: 'b' } };

    await assert.rejects(
      leases.replaceNamespacedLease({ namespace: 'default', name: 'unconditional', body }),
      (error: unknown) => {
        assert.ok(error instanceof ApiException);
        assert.equal(error.code, 422);
        assert.match(
          String(error.body),
          /leases.coordination.k8s.io \\"unconditional\\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update/,
        );
        return true;
      },
    );
    const replaced = await leases.replaceNamespacedLease({
      namespace: 'default',
      name: 'unconditional',
      body: { ...body, metadata: { ...body.metadata, resourceVersion: created.metadata?.resourceVersion } },
    });
    assert.equal(replaced.spec?.holderIdentity, 'b');
  });

  function amp(name: string, spec: Record<string, unknown>): Record<string, unknown> {
    return {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'AzureMachinePool',
      metadata: { name, namespace: 'default' },
      spec,
    };
  }
  const TEMPLATE = { vmSize: 'Standard_D2s_v5', osDisk: { osType: 'Linux', diskSizeGB: 30 } };

  void it("an AzureMachinePool without location or vmSize fails its CRD's schema (422)", async () => {
    const result = await apply(amp('no-location', { template: { osDisk: TEMPLATE.osDisk } }));

    assert.match(result.stderr, /The AzureMachinePool "no-location" is invalid: \n/);
    assert.match(result.stderr, /\* spec.location: Required value\n\* spec.template.vmSize: Required value/);
  });

  void it("CAPZ's webhook denies two image kinds, and maxSurge 0 with maxUnavailable 0 (403)", async () => {
    const both = await apply(
      amp('two-images', {
        location: 'westeurope',
        template: {
          ...TEMPLATE,
          image: {
            id: '/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/images/i',
            marketplace: { publisher: 'p', offer: 'o', sku: 's', version: '1' },
          },
        },
      }),
    );
    assert.match(
      both.stderr,
      /admission webhook "validation.azuremachinepool.infrastructure.cluster.x-k8s.io" denied the request: image.Marketplace: Forbidden: Marketplace cannot be used as an image ID has been specified/,
    );
    const stuck = await apply(
      amp('no-progress', {
        location: 'westeurope',
        template: TEMPLATE,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } },
      }),
    );
    assert.match(
      stuck.stderr,
      /denied the request: rolling update strategy MaxUnavailable must not be 0 if MaxSurge is 0/,
    );
  });

  void it("Cluster API's MachinePool webhook keeps spec.clusterName (422)", async () => {
    const result = await kubectl([
      'patch',
      'machinepool',
      POOL,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { clusterName: 'another' } }),
    ]);

    assert.match(result.stderr, /The MachinePool "capz-lab-mp-0" is invalid: \n/);
    assert.match(result.stderr, /\* spec.clusterName: Forbidden: field is immutable\n/);
    assert.match(
      result.stderr,
      /\* spec.clusterName: Invalid value: "another": spec.clusterName and spec.template.spec.clusterName must be set to the same value/,
    );
  });
});

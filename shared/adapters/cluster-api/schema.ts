/**
 * zod schemas of the Cluster API objects the adapter reads, as the management cluster's API server sends
 * them (client-node hands custom objects over as plain JSON): only the fields the product decides on or
 * copies, every object kept loose so that a clone keeps the fields it does not know. A MachinePool is read
 * at v1beta1 or v1beta2 (machine-pool-version.ts), whose shapes agree on these fields but the template's
 * references: `apiVersion` in v1beta1, `apiGroup` in v1beta2.
 * Shapes: sigs.k8s.io/cluster-api api/core/v1beta1 and api/core/v1beta2 (MachinePool), sigs.k8s.io/cluster-api-provider-azure
 * exp/api/v1beta1 (AzureMachinePool, AzureMachinePoolMachine), bootstrap/kubeadm/api/v1beta1 (KubeadmConfig).
 */
import { z } from 'zod';

const StringMap = z.record(z.string(), z.string());

export const ObjectMeta = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().nullish(),
  labels: StringMap.nullish(),
  annotations: StringMap.nullish(),
  ownerReferences: z
    .array(z.looseObject({ apiVersion: z.string().optional(), kind: z.string(), name: z.string() }))
    .nullish(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

const ObjectReference = z.looseObject({
  apiVersion: z.string().optional(),
  apiGroup: z.string().optional(),
  kind: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
});

export const MachinePool = z.looseObject({
  metadata: ObjectMeta,
  spec: z.looseObject({
    clusterName: z.string(),
    replicas: z.number().int().nullish(),
    template: z.looseObject({
      spec: z.looseObject({
        bootstrap: z.looseObject({
          configRef: ObjectReference.nullish(),
          dataSecretName: z.string().nullish(),
        }),
        infrastructureRef: ObjectReference,
        clusterName: z.string().optional(),
        version: z.string().nullish(),
      }),
    }),
  }),
});
export type MachinePool = z.infer<typeof MachinePool>;

const IntOrString = z.union([z.number().int(), z.string()]);

export const AzureMachinePool = z.looseObject({
  metadata: ObjectMeta,
  spec: z.looseObject({
    template: z.looseObject({ image: z.record(z.string(), z.unknown()).nullish() }),
    strategy: z
      .looseObject({
        type: z.string().nullish(),
        rollingUpdate: z
          .looseObject({
            maxSurge: IntOrString.nullish(),
            maxUnavailable: IntOrString.nullish(),
            deletePolicy: z.string().nullish(),
          })
          .nullish(),
      })
      .nullish(),
  }),
});
export type AzureMachinePool = z.infer<typeof AzureMachinePool>;

export const AzureMachinePoolMachine = z.looseObject({
  metadata: ObjectMeta,
  spec: z.looseObject({ instanceID: z.string().nullish(), providerID: z.string().nullish() }).nullish(),
  status: z
    .looseObject({
      ready: z.boolean().nullish(),
      latestModelApplied: z.boolean().nullish(),
      provisioningState: z.string().nullish(),
      nodeRef: z.looseObject({ name: z.string().optional() }).nullish(),
    })
    .nullish(),
});
export type AzureMachinePoolMachine = z.infer<typeof AzureMachinePoolMachine>;

export const KubeadmConfig = z.looseObject({
  metadata: ObjectMeta,
  spec: z.record(z.string(), z.unknown()).nullish(),
});
export type KubeadmConfig = z.infer<typeof KubeadmConfig>;

/** A list answer: its items (parsed one by one by the caller) and the raw `continue` token. */
export const ObjectList = z.looseObject({
  items: z.array(z.unknown()).nullish(),
  metadata: z.looseObject({ continue: z.string().nullish() }).nullish(),
});

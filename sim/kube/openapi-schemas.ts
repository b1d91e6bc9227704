/**
 * OpenAPI schema definitions of the kinds the simulated API server serves, in the Kubernetes naming
 * (`io.k8s.api.core.v1.Node`…) with `x-kubernetes-group-version-kind` on every top-level kind, for
 * `kubectl explain`, kubectl's validation and strict field validation. Written from the Kubernetes API
 * reference; fields the simulator never models are left out, and the objects whose full shape is not
 * written out (pod and container internals, statuses) keep unknown fields
 * (`x-kubernetes-preserve-unknown-fields`), so strict validation never refuses a valid manifest.
 * References are written `#/definitions/…` (OpenAPI v2); openapi.ts rewrites them for v3.
 */
import { APIEXTENSIONS, CRD_DEFINITIONS } from './crd-definitions.js';

export type Schema = Record<string, unknown>;

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const CORE = 'io.k8s.api.core.v1';
const APPS = 'io.k8s.api.apps.v1';
const POLICY = 'io.k8s.api.policy.v1';
const COORDINATION = 'io.k8s.api.coordination.v1';
const AUTHORIZATION = 'io.k8s.api.authorization.v1';
const AUTHENTICATION = 'io.k8s.api.authentication.v1';

/** A reference the way the Kubernetes documents write it (`allOf` around the `$ref`, which kubectl explain follows). */
function ref(name: string, description?: string): Schema {
  const target = { allOf: [{ $ref: `#/definitions/${name}` }], default: {} };
  return description === undefined ? target : { description, ...target };
}
const str = (description: string): Schema => ({ description, type: 'string' });
const int = (description: string): Schema => ({ description, type: 'integer', format: 'int32' });
const int64 = (description: string): Schema => ({ description, type: 'integer', format: 'int64' });
const bool = (description: string): Schema => ({ description, type: 'boolean' });
const time = (description: string): Schema => ref(`${META}.Time`, description);
const strings = (description: string): Schema => ({
  description,
  type: 'array',
  items: { type: 'string', default: '' },
});
const stringMap = (description: string): Schema => ({
  description,
  type: 'object',
  additionalProperties: { type: 'string', default: '' },
});
const list = (description: string, item: string): Schema => ({
  description,
  type: 'array',
  items: ref(item),
});

function object(description: string, properties: Record<string, Schema>, extra: Schema = {}): Schema {
  return { description, type: 'object', properties, ...extra };
}

/** An object the simulator reads only in part: described fields, others kept as sent. */
function partial(description: string, properties: Record<string, Schema>): Schema {
  return object(description, properties, { 'x-kubernetes-preserve-unknown-fields': true });
}

function kind(
  description: string,
  gvk: { group: string; version: string; kind: string },
  properties: Record<string, Schema>,
): Schema {
  return object(
    description,
    {
      apiVersion: str(
        'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
      ),
      kind: str(
        'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.',
      ),
      metadata: ref(`${META}.ObjectMeta`, "Standard object's metadata."),
      ...properties,
    },
    { 'x-kubernetes-group-version-kind': [gvk] },
  );
}

function listKind(item: string, gvk: { group: string; version: string; kind: string }): Schema {
  return object(
    `${gvk.kind} is a list of ${item.split('.').pop() ?? item}.`,
    {
      apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
      kind: str('Kind is a string value representing the REST resource this object represents.'),
      metadata: ref(`${META}.ListMeta`, 'Standard list metadata.'),
      items: list('Items is the list of objects.', item),
    },
    { required: ['items'], 'x-kubernetes-group-version-kind': [gvk] },
  );
}

const LABEL_SELECTOR = ref(`${META}.LabelSelector`, 'Label query over pods.');
const TEMPLATE = ref(`${CORE}.PodTemplateSpec`, 'Template describes the pods that will be created.');

export const DEFINITIONS: Readonly<Record<string, Schema>> = {
  ...CRD_DEFINITIONS,
  // ---------------------------------------------------------------- meta
  [`${META}.Time`]: {
    description:
      'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON (RFC 3339).',
    type: 'string',
    format: 'date-time',
  },
  [`${META}.MicroTime`]: {
    description: 'MicroTime is version of Time with microsecond level precision.',
    type: 'string',
    format: 'date-time',
  },
  [`${META}.ObjectMeta`]: object(
    'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
    {
      name: str('Name must be unique within a namespace. Cannot be updated.'),
      generateName: str(
        'GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.',
      ),
      namespace: str('Namespace defines the space within which each name must be unique.'),
      uid: str(
        'UID is the unique in time and space value for this object. Populated by the system. Read-only.',
      ),
      resourceVersion: str(
        'An opaque value that represents the internal version of this object, for optimistic concurrency. Read-only.',
      ),
      generation: int64(
        'A sequence number representing a specific generation of the desired state. Read-only.',
      ),
      creationTimestamp: time(
        'CreationTimestamp is a timestamp representing the server time when this object was created. Read-only.',
      ),
      deletionTimestamp: time(
        'DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. Read-only.',
      ),
      deletionGracePeriodSeconds: int64(
        'Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Read-only.',
      ),
      labels: stringMap(
        'Map of string keys and values that can be used to organize and categorize (scope and select) objects.',
      ),
      annotations: stringMap(
        'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata.',
      ),
      ownerReferences: list('List of objects depended by this object.', `${META}.OwnerReference`),
      finalizers: strings('Must be empty before the object is deleted from the registry.'),
      managedFields: {
        description:
          'ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow.',
        type: 'array',
        items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
      selfLink: str(
        'Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.',
      ),
    },
  ),
  [`${META}.ListMeta`]: object('ListMeta describes metadata that synthetic resources must have.', {
    resourceVersion: str("String that identifies the server's internal version of this object."),
    continue: str('continue may be set if the user set a limit on the number of items returned.'),
    remainingItemCount: int64(
      'remainingItemCount is the number of subsequent items in the list which are not included in this list response.',
    ),
    selfLink: str('Deprecated: selfLink is a legacy read-only field.'),
  }),
  [`${META}.OwnerReference`]: object(
    'OwnerReference contains enough information to let you identify an owning object.',
    {
      apiVersion: str('API version of the referent.'),
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      uid: str('UID of the referent.'),
      controller: bool('If true, this reference points to the managing controller.'),
      blockOwnerDeletion: bool(
        'If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed.',
      ),
    },
    { required: ['apiVersion', 'kind', 'name', 'uid'] },
  ),
  [`${META}.LabelSelector`]: object(
    'A label selector is a label query over a set of resources. The result of matchLabels and matchExpressions are ANDed.',
    {
      matchLabels: stringMap('matchLabels is a map of {key,value} pairs.'),
      matchExpressions: list(
        'matchExpressions is a list of label selector requirements. The requirements are ANDed.',
        `${META}.LabelSelectorRequirement`,
      ),
    },
  ),
  [`${META}.LabelSelectorRequirement`]: object(
    'A label selector requirement is a selector that contains values, a key, and an operator that relates the key and values.',
    {
      key: str('key is the label key that the selector applies to.'),
      operator: str(
        "operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists and DoesNotExist.",
      ),
      values: strings('values is an array of string values.'),
    },
    { required: ['key', 'operator'] },
  ),
  [`${META}.Preconditions`]: object(
    'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
    {
      resourceVersion: str('Specifies the target ResourceVersion'),
      uid: str('Specifies the target UID.'),
    },
  ),
  [`${META}.DeleteOptions`]: object('DeleteOptions may be provided when deleting an API object.', {
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
    kind: str('Kind is a string value representing the REST resource this object represents.'),
    dryRun: strings(
      'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed',
    ),
    gracePeriodSeconds: int64('The duration in seconds before the object should be deleted.'),
    preconditions: ref(`${META}.Preconditions`, 'Must be fulfilled before a deletion is carried out.'),
    propagationPolicy: str(
      "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
    ),
  }),
  [`${META}.Status`]: partial("Status is a return value for calls that don't return other objects.", {
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
    kind: str('Kind is a string value representing the REST resource this object represents.'),
    code: int('Suggested HTTP return code for this status, 0 if not set.'),
    message: str('A human-readable description of the status of this operation.'),
    reason: str('A machine-readable description of why this operation is in the "Failure" status.'),
    status: str('Status of the operation. One of: "Success" or "Failure".'),
  }),
  [`${META}.Patch`]: {
    description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
    type: 'object',
  },

  // ---------------------------------------------------------------- core: nodes
  [`${CORE}.Node`]: kind(
    'Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache (i.e. in etcd).',
    { group: '', version: 'v1', kind: 'Node' },
    {
      spec: ref(`${CORE}.NodeSpec`, 'Spec defines the behavior of a node.'),
      status: ref(
        `${CORE}.NodeStatus`,
        'Most recently observed status of the node. Populated by the system. Read-only.',
      ),
    },
  ),
  [`${CORE}.NodeList`]: listKind(`${CORE}.Node`, { group: '', version: 'v1', kind: 'NodeList' }),
  [`${CORE}.NodeSpec`]: object('NodeSpec describes the attributes that a node is created with.', {
    podCIDR: str('PodCIDR represents the pod IP range assigned to the node.'),
    podCIDRs: strings(
      'podCIDRs represents the IP ranges assigned to the node for usage by Pods on that node.',
    ),
    providerID: str(
      'ID of the node assigned by the cloud provider in the format: <ProviderName>://<ProviderSpecificNodeID>',
    ),
    taints: list("If specified, the node's taints.", `${CORE}.Taint`),
    unschedulable: bool(
      'Unschedulable controls node schedulability of new pods. By default, node is schedulable.',
    ),
  }),
  [`${CORE}.Taint`]: object(
    'The node this Taint is attached to has the "effect" on any pod that does not tolerate the Taint.',
    {
      key: str('Required. The taint key to be applied to a node.'),
      value: str('The taint value corresponding to the taint key.'),
      effect: str(
        'Required. The effect of the taint on pods that do not tolerate the taint. Valid effects are NoSchedule, PreferNoSchedule and NoExecute.',
      ),
      timeAdded: time('TimeAdded represents the time at which the taint was added.'),
    },
    { required: ['key', 'effect'] },
  ),
  [`${CORE}.NodeStatus`]: partial('NodeStatus is information about the current status of a node.', {
    addresses: list('List of addresses reachable to the node.', `${CORE}.NodeAddress`),
    allocatable: stringMap(
      'Allocatable represents the resources of a node that are available for scheduling.',
    ),
    capacity: stringMap('Capacity represents the total resources of a node.'),
    conditions: list('Conditions is an array of current observed node conditions.', `${CORE}.NodeCondition`),
    images: {
      description: 'List of container images on this node',
      type: 'array',
      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    nodeInfo: ref(`${CORE}.NodeSystemInfo`, 'Set of ids/uuids to uniquely identify the node.'),
  }),
  [`${CORE}.NodeAddress`]: object("NodeAddress contains information for the node's address.", {
    address: str('The node address.'),
    type: str('Node address type, one of Hostname, ExternalIP or InternalIP.'),
  }),
  [`${CORE}.NodeCondition`]: object('NodeCondition contains condition information for a node.', {
    type: str('Type of node condition.'),
    status: str('Status of the condition, one of True, False, Unknown.'),
    lastHeartbeatTime: time('Last time we got an update on a given condition.'),
    lastTransitionTime: time('Last time the condition transit from one status to another.'),
    reason: str("(brief) reason for the condition's last transition."),
    message: str('Human readable message indicating details about last transition.'),
  }),
  [`${CORE}.NodeSystemInfo`]: partial('NodeSystemInfo is a set of ids/uuids to uniquely identify the node.', {
    machineID: str(
      'MachineID reported by the node. For unique machine identification in the cluster this field is preferred.',
    ),
    systemUUID: str('SystemUUID reported by the node.'),
    bootID: str('Boot ID reported by the node.'),
    kernelVersion: str("Kernel Version reported by the node from 'uname -r'."),
    osImage: str('OS Image reported by the node from /etc/os-release.'),
    containerRuntimeVersion: str('ContainerRuntime Version reported by the node through runtime remote API.'),
    kubeletVersion: str('Kubelet Version reported by the node.'),
    operatingSystem: str('The Operating System reported by the node'),
    architecture: str('The Architecture reported by the node'),
  }),

  // ---------------------------------------------------------------- core: pods
  [`${CORE}.Pod`]: kind(
    'Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.',
    { group: '', version: 'v1', kind: 'Pod' },
    {
      spec: ref(`${CORE}.PodSpec`, 'Specification of the desired behavior of the pod.'),
      status: ref(`${CORE}.PodStatus`, 'Most recently observed status of the pod. Read-only.'),
    },
  ),
  [`${CORE}.PodList`]: listKind(`${CORE}.Pod`, { group: '', version: 'v1', kind: 'PodList' }),
  [`${CORE}.PodTemplateSpec`]: object(
    'PodTemplateSpec describes the data a pod should have when created from a template',
    {
      metadata: ref(`${META}.ObjectMeta`, "Standard object's metadata."),
      spec: ref(`${CORE}.PodSpec`, 'Specification of the desired behavior of the pod.'),
    },
  ),
  [`${CORE}.PodSpec`]: partial('PodSpec is a description of a pod.', {
    containers: list(
      'List of containers belonging to the pod. There must be at least one container in a Pod.',
      `${CORE}.Container`,
    ),
    initContainers: list('List of initialization containers belonging to the pod.', `${CORE}.Container`),
    nodeName: str('NodeName indicates in which node this pod is scheduled.'),
    nodeSelector: stringMap('NodeSelector is a selector which must be true for the pod to fit on a node.'),
    tolerations: list("If specified, the pod's tolerations.", `${CORE}.Toleration`),
    hostPID: bool("Use the host's pid namespace. Optional: Default to false."),
    hostNetwork: bool("Host networking requested for this pod. Use the host's network namespace."),
    restartPolicy: str('Restart policy for all containers within the pod. One of Always, OnFailure, Never.'),
    serviceAccountName: str('ServiceAccountName is the name of the ServiceAccount to use to run this pod.'),
    automountServiceAccountToken: bool(
      'AutomountServiceAccountToken indicates whether a service account token should be automatically mounted.',
    ),
    terminationGracePeriodSeconds: int64(
      'Optional duration in seconds the pod needs to terminate gracefully.',
    ),
    volumes: list(
      'List of volumes that can be mounted by containers belonging to the pod.',
      `${CORE}.Volume`,
    ),
    priorityClassName: str("If specified, indicates the pod's priority."),
  }),
  [`${CORE}.Container`]: partial('A single application container that you want to run within a pod.', {
    name: str(
      'Name of the container specified as a DNS_LABEL. Each container in a pod must have a unique name.',
    ),
    image: str('Container image name.'),
    imagePullPolicy: str('Image pull policy. One of Always, Never, IfNotPresent.'),
    command: strings('Entrypoint array. Not executed within a shell.'),
    args: strings('Arguments to the entrypoint.'),
    securityContext: partial(
      'SecurityContext defines the security options the container should be run with.',
      {
        privileged: bool('Run container in privileged mode.'),
      },
    ),
  }),
  [`${CORE}.Toleration`]: object(
    'The pod this Toleration is attached to tolerates any taint that matches the triple <key,value,effect>.',
    {
      key: str('Key is the taint key that the toleration applies to. Empty means match all taint keys.'),
      operator: str(
        "Operator represents a key's relationship to the value. Valid operators are Exists and Equal.",
      ),
      value: str('Value is the taint value the toleration matches to.'),
      effect: str('Effect indicates the taint effect to match. Empty means match all taint effects.'),
      tolerationSeconds: int64(
        'TolerationSeconds represents the period of time the toleration tolerates the taint.',
      ),
    },
  ),
  [`${CORE}.Volume`]: partial(
    'Volume represents a named volume in a pod that may be accessed by any container in the pod.',
    {
      name: str('name of the volume. Must be a DNS_LABEL and unique within the pod.'),
      emptyDir: partial("emptyDir represents a temporary directory that shares a pod's lifetime.", {}),
    },
  ),
  [`${CORE}.PodStatus`]: partial('PodStatus represents information about the status of a pod.', {
    phase: str('The phase of a Pod: Pending, Running, Succeeded, Failed, Unknown.'),
    conditions: {
      description: 'Current service state of pod.',
      type: 'array',
      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    hostIP: str('hostIP holds the IP address of the host to which the pod is assigned.'),
    podIP: str('podIP address allocated to the pod.'),
    startTime: time('RFC 3339 date and time at which the object was acknowledged by the Kubelet.'),
    reason: str('A brief CamelCase message indicating details about why the pod is in this state.'),
    message: str('A human readable message indicating details about why the pod is in this condition.'),
  }),

  // ---------------------------------------------------------------- core: others
  [`${CORE}.Namespace`]: kind(
    'Namespace provides a scope for Names. Use of multiple namespaces is optional.',
    { group: '', version: 'v1', kind: 'Namespace' },
    {
      spec: partial('NamespaceSpec describes the attributes on a Namespace.', {
        finalizers: strings(
          'Finalizers is an opaque list of values that must be empty to permanently remove object from storage.',
        ),
      }),
      status: partial('NamespaceStatus is information about the current status of a Namespace.', {
        phase: str('Phase is the current lifecycle phase of the namespace.'),
      }),
    },
  ),
  [`${CORE}.NamespaceList`]: listKind(`${CORE}.Namespace`, {
    group: '',
    version: 'v1',
    kind: 'NamespaceList',
  }),
  [`${CORE}.ServiceAccount`]: kind(
    'ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, for an identity; a principal that can be authenticated and authorized; a set of secrets.',
    { group: '', version: 'v1', kind: 'ServiceAccount' },
    {
      automountServiceAccountToken: bool(
        'AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted.',
      ),
      secrets: {
        description:
          'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
        type: 'array',
        items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
      imagePullSecrets: {
        description:
          'ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling any images.',
        type: 'array',
        items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  ),
  [`${CORE}.ServiceAccountList`]: listKind(`${CORE}.ServiceAccount`, {
    group: '',
    version: 'v1',
    kind: 'ServiceAccountList',
  }),
  [`${CORE}.Secret`]: kind(
    'Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.',
    { group: '', version: 'v1', kind: 'Secret' },
    {
      data: stringMap(
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string.",
      ),
      stringData: stringMap(
        'stringData allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience.',
      ),
      type: str('Used to facilitate programmatic handling of secret data.'),
      immutable: bool('Immutable, if set to true, ensures that data stored in the Secret cannot be updated.'),
    },
  ),
  [`${CORE}.SecretList`]: listKind(`${CORE}.Secret`, { group: '', version: 'v1', kind: 'SecretList' }),
  [`${CORE}.ObjectReference`]: object(
    'ObjectReference contains enough information to let you inspect or modify the referred object.',
    {
      apiVersion: str('API version of the referent.'),
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      namespace: str('Namespace of the referent.'),
      uid: str('UID of the referent.'),
      resourceVersion: str('Specific resourceVersion to which this reference is made, if any.'),
      fieldPath: str(
        'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.',
      ),
    },
  ),
  [`${CORE}.Event`]: kind(
    'Event is a report of an event somewhere in the cluster.',
    { group: '', version: 'v1', kind: 'Event' },
    {
      involvedObject: ref(`${CORE}.ObjectReference`, 'The object that this event is about.'),
      reason: str(
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
      ),
      message: str('A human-readable description of the status of this operation.'),
      source: object('EventSource contains information for an event.', {
        component: str('Component from which the event is generated.'),
        host: str('Node name on which the event is generated.'),
      }),
      firstTimestamp: time('The time at which the event was first recorded.'),
      lastTimestamp: time('The time at which the most recent occurrence of this event was recorded.'),
      eventTime: ref(`${META}.MicroTime`, 'Time when this Event was first observed.'),
      count: int('The number of times this event has occurred.'),
      type: str('Type of this event (Normal, Warning), new types could be added in the future'),
      reportingComponent: str('Name of the controller that emitted this Event.'),
      reportingInstance: str('ID of the controller instance.'),
    },
  ),
  [`${CORE}.EventList`]: listKind(`${CORE}.Event`, { group: '', version: 'v1', kind: 'EventList' }),

  // ---------------------------------------------------------------- apps
  [`${APPS}.Deployment`]: kind(
    'Deployment enables declarative updates for Pods and ReplicaSets.',
    { group: 'apps', version: 'v1', kind: 'Deployment' },
    {
      spec: ref(`${APPS}.DeploymentSpec`, 'Specification of the desired behavior of the Deployment.'),
      status: partial('DeploymentStatus is the most recently observed status of the Deployment.', {
        replicas: int(
          'Total number of non-terminated pods targeted by this deployment (their labels match the selector).',
        ),
        readyReplicas: int('Total number of ready pods targeted by this Deployment.'),
        availableReplicas: int(
          'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
        ),
        updatedReplicas: int(
          'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
        ),
      }),
    },
  ),
  [`${APPS}.DeploymentList`]: listKind(`${APPS}.Deployment`, {
    group: 'apps',
    version: 'v1',
    kind: 'DeploymentList',
  }),
  [`${APPS}.DeploymentSpec`]: object(
    'DeploymentSpec is the specification of the desired behavior of the Deployment.',
    {
      replicas: int('Number of desired pods. Defaults to 1.'),
      selector: LABEL_SELECTOR,
      template: TEMPLATE,
      strategy: partial('DeploymentStrategy describes how to replace existing pods with new ones.', {
        type: str('Type of deployment. Can be "Recreate" or "RollingUpdate". Default is RollingUpdate.'),
      }),
      minReadySeconds: int(
        'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available.',
      ),
      revisionHistoryLimit: int('The number of old ReplicaSets to retain to allow rollback.'),
      progressDeadlineSeconds: int(
        'The maximum time in seconds for a deployment to make progress before it is considered to be failed.',
      ),
      paused: bool('Indicates that the deployment is paused.'),
    },
    { required: ['selector', 'template'] },
  ),
  [`${APPS}.ReplicaSet`]: kind(
    'ReplicaSet ensures that a specified number of pod replicas are running at any given time.',
    { group: 'apps', version: 'v1', kind: 'ReplicaSet' },
    {
      spec: object(
        'ReplicaSetSpec is the specification of a ReplicaSet.',
        {
          replicas: int('Replicas is the number of desired pods.'),
          selector: LABEL_SELECTOR,
          template: TEMPLATE,
          minReadySeconds: int(
            'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available.',
          ),
        },
        { required: ['selector'] },
      ),
      status: partial('ReplicaSetStatus represents the current status of a ReplicaSet.', {
        replicas: int('Replicas is the most recently observed number of non-terminating pods.'),
        readyReplicas: int(
          'The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.',
        ),
      }),
    },
  ),
  [`${APPS}.ReplicaSetList`]: listKind(`${APPS}.ReplicaSet`, {
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSetList',
  }),
  [`${APPS}.DaemonSet`]: kind(
    'DaemonSet represents the configuration of a daemon set.',
    { group: 'apps', version: 'v1', kind: 'DaemonSet' },
    {
      spec: object(
        'DaemonSetSpec is the specification of a daemon set.',
        {
          selector: LABEL_SELECTOR,
          template: TEMPLATE,
          updateStrategy: partial(
            'DaemonSetUpdateStrategy is a struct used to control the update strategy for a DaemonSet.',
            {
              type: str(
                'Type of daemon set update. Can be "RollingUpdate" or "OnDelete". Default is RollingUpdate.',
              ),
            },
          ),
          minReadySeconds: int(
            'The minimum number of seconds for which a newly created DaemonSet pod should be ready without any of its container crashing, for it to be considered available.',
          ),
          revisionHistoryLimit: int('The number of old history to retain to allow rollback.'),
        },
        { required: ['selector', 'template'] },
      ),
      status: partial('DaemonSetStatus represents the current status of a daemon set.', {
        desiredNumberScheduled: int('The total number of nodes that should be running the daemon pod.'),
        currentNumberScheduled: int(
          'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.',
        ),
        numberReady: int(
          'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.',
        ),
      }),
    },
  ),
  [`${APPS}.DaemonSetList`]: listKind(`${APPS}.DaemonSet`, {
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSetList',
  }),

  // ---------------------------------------------------------------- policy, coordination
  [`${POLICY}.PodDisruptionBudget`]: kind(
    'PodDisruptionBudget is an object to define the max disruption that can be caused to a collection of pods',
    { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget' },
    {
      spec: object('PodDisruptionBudgetSpec is a description of a PodDisruptionBudget.', {
        minAvailable: {
          description:
            'An eviction is allowed if at least "minAvailable" pods selected by "selector" will still be available after the eviction.',
          'x-kubernetes-int-or-string': true,
        },
        maxUnavailable: {
          description:
            'An eviction is allowed if at most "maxUnavailable" pods selected by "selector" are unavailable after the eviction.',
          'x-kubernetes-int-or-string': true,
        },
        selector: LABEL_SELECTOR,
        unhealthyPodEvictionPolicy: str(
          'UnhealthyPodEvictionPolicy defines the criteria for when unhealthy pods should be considered for eviction. IfHealthyBudget or AlwaysAllow.',
        ),
      }),
      status: partial(
        'PodDisruptionBudgetStatus represents information about the status of a PodDisruptionBudget.',
        {
          disruptionsAllowed: int('Number of pod disruptions that are currently allowed.'),
          currentHealthy: int('current number of healthy pods'),
          desiredHealthy: int('minimum desired number of healthy pods'),
          expectedPods: int('total number of pods counted by this disruption budget'),
        },
      ),
    },
  ),
  [`${POLICY}.PodDisruptionBudgetList`]: listKind(`${POLICY}.PodDisruptionBudget`, {
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudgetList',
  }),
  [`${POLICY}.Eviction`]: kind(
    'Eviction evicts a pod from its node subject to certain policies and safety constraints. This is a subresource of Pod.',
    { group: 'policy', version: 'v1', kind: 'Eviction' },
    {
      deleteOptions: ref(`${META}.DeleteOptions`, 'DeleteOptions may be provided'),
    },
  ),
  [`${COORDINATION}.Lease`]: kind(
    'Lease defines a lease concept.',
    { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' },
    {
      spec: object('LeaseSpec is a specification of a Lease.', {
        holderIdentity: str('holderIdentity contains the identity of the holder of a current lease.'),
        leaseDurationSeconds: int(
          'leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it.',
        ),
        acquireTime: ref(`${META}.MicroTime`, 'acquireTime is a time when the current lease was acquired.'),
        renewTime: ref(
          `${META}.MicroTime`,
          'renewTime is a time when the current holder of a lease has last updated the lease.',
        ),
        leaseTransitions: int('leaseTransitions is the number of transitions of a lease between holders.'),
      }),
    },
  ),
  [`${COORDINATION}.LeaseList`]: listKind(`${COORDINATION}.Lease`, {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'LeaseList',
  }),

  // ---------------------------------------------------------------- self reviews
  [`${AUTHORIZATION}.SelfSubjectAccessReview`]: kind(
    'SelfSubjectAccessReview checks whether or the current user can perform an action.',
    { group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectAccessReview' },
    {
      spec: object(
        'SelfSubjectAccessReviewSpec is a description of the access request. Exactly one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set',
        {
          resourceAttributes: partial(
            'ResourceAttributes includes the authorization attributes available for resource requests to the Authorizer interface',
            {
              namespace: str('Namespace is the namespace of the action being requested.'),
              verb: str(
                'Verb is a kubernetes resource API verb, like: get, list, watch, create, update, delete, proxy. "*" means all.',
              ),
              group: str('Group is the API Group of the Resource. "*" means all.'),
              resource: str('Resource is one of the existing resource types. "*" means all.'),
              subresource: str('Subresource is one of the existing resource types. "" means none.'),
              name: str(
                'Name is the name of the resource being requested for a "get" or deleted for a "delete". "" (empty) means all.',
              ),
            },
          ),
          nonResourceAttributes: object(
            'NonResourceAttributes includes the authorization attributes available for non-resource requests to the Authorizer interface',
            {
              path: str('Path is the URL path of the request'),
              verb: str('Verb is the standard HTTP verb'),
            },
          ),
        },
      ),
      status: partial('SubjectAccessReviewStatus', {
        allowed: bool('Allowed is required. True if the action would be allowed, false otherwise.'),
        reason: str('Reason is optional. It indicates why a request was allowed or denied.'),
      }),
    },
  ),
  [`${AUTHORIZATION}.SelfSubjectRulesReview`]: kind(
    'SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace.',
    { group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectRulesReview' },
    {
      spec: object('SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview.', {
        namespace: str('Namespace to evaluate rules for. Required.'),
      }),
      status: partial('SubjectRulesReviewStatus contains the result of a rules check.', {
        incomplete: bool('Incomplete is true when the rules returned by this call are incomplete.'),
      }),
    },
  ),
  [`${AUTHENTICATION}.SelfSubjectReview`]: kind(
    'SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request.',
    { group: 'authentication.k8s.io', version: 'v1', kind: 'SelfSubjectReview' },
    {
      status: partial('SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.', {}),
    },
  ),
};

/** The definition name of a served kind, e.g. `Pod` in group `` → `io.k8s.api.core.v1.Pod`. */
export function definitionOf(group: string, kind: string): string {
  const prefix: Record<string, string> = {
    '': CORE,
    apps: APPS,
    policy: POLICY,
    'coordination.k8s.io': COORDINATION,
    'authorization.k8s.io': AUTHORIZATION,
    'authentication.k8s.io': AUTHENTICATION,
    'apiextensions.k8s.io': APIEXTENSIONS,
  };
  return `${prefix[group] ?? CORE}.${kind}`;
}

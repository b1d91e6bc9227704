/**
 * Reboot notices: every accepted event shape (Event Grid and CloudEvents envelopes of Health Resources
 * and resource-action events, our own CloudEvent, kured's webhook) normalized into ONE RebootNotice,
 * and a notice mapped to the configured cluster and pool it concerns. Pure: no I/O, no clock.
 * Over 400 lines on purpose: every accepted event schema sits next to the others and to the one notice
 * they become, so a difference between sources is seen in one file.
 */
import { z } from 'zod';

import {
  DNS_SUBDOMAIN_RULE,
  GUID_RULE,
  IDENTIFIER_RULE,
  RESOURCE_GROUP_RULE,
  SCALE_SET_RULE,
} from '../config/names.js';
import { isTerminal } from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import type { ScaleSetRef, VirtualMachineRef } from '../domain/resource-id.js';
import { parseComputeResourceId } from '../domain/resource-id.js';

/** Marks our own queue messages, so the queue trigger tells them from raw Event Grid deliveries. */
export const REBOOT_NOTICE_SCHEMA = 'vmss-prototype/reboot-notice@1';

const HEALTH_AVAILABILITY_CHANGED =
  'Microsoft.ResourceNotifications.HealthResources.AvailabilityStatusChanged';
const HEALTH_RESOURCE_ANNOTATED = 'Microsoft.ResourceNotifications.HealthResources.ResourceAnnotated';
const RESOURCE_ACTION_SUCCESS = 'Microsoft.Resources.ResourceActionSuccess';
const SUBSCRIPTION_VALIDATION = 'Microsoft.EventGrid.SubscriptionValidationEvent';
/** Our CloudEvent type for custom topics (e.g. a node agent or a pipeline announcing a reboot). */
const NODE_REBOOTED_CLOUD_EVENT = 'io.vmss-prototype.node.rebooted';

/**
 * Health Resources annotations that mean the guest OS came back from a reboot someone chose
 * (https://learn.microsoft.com/azure/service-health/resource-health-vm-annotation). Host repairs and planned maintenance reboot the host, not a patched guest.
 */
const REBOOT_ANNOTATIONS: ReadonlySet<string> = new Set([
  'VirtualMachineRestarted',
  'VirtualMachineRebootInitiatedByControlPlane',
]);

/** ARM actions after which a VM runs a (possibly newly patched) OS again. */
const REBOOT_OPERATIONS: ReadonlySet<string> = new Set(
  [
    'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/restart/action',
    'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/reimage/action',
    'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/reimageall/action',
    'Microsoft.Compute/virtualMachines/restart/action',
    'Microsoft.Compute/virtualMachines/reimage/action',
  ].map((operation) => operation.toLowerCase()),
);

const MAX_RESOURCE_ID = 512;
const MAX_EVENT_ID = 128;

function hasControlCharacters(value: string): boolean {
  return [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
}

const EventId = z
  .string()
  .min(1)
  .max(MAX_EVENT_ID)
  .refine((value) => !hasControlCharacters(value), { error: 'an id without control characters' });

const Timestamp = z.iso.datetime({ offset: true });

/** A virtual machine an ARM id names: a Uniform scale-set instance or a VM (Flexible member or standalone). */
export type VmResource =
  | {
      readonly kind: 'scale-set-instance';
      readonly subscriptionId: string;
      readonly resourceGroup: string;
      readonly scaleSet: string;
      readonly instanceId: string;
    }
  | {
      readonly kind: 'virtual-machine';
      readonly subscriptionId: string;
      readonly resourceGroup: string;
      readonly name: string;
    };

const VM_NAME = /^[A-Za-z0-9](?:[-\w.]{0,62}[A-Za-z0-9_])?$/;

/**
 * Parses a VM's ARM id (the grammar is the domain's: resource-id.ts), then holds every name to Azure's
 * naming rules, because these ids come from events: `..`, `%2F`, quotes, whitespace or control characters
 * never get through.
 */
export function parseVmResourceId(id: string): VmResource | undefined {
  if (id.length > MAX_RESOURCE_ID || hasControlCharacters(id) || id !== id.trim()) return undefined;
  const parsed = parseComputeResourceId(id);
  if (!parsed.ok) return undefined;
  const resource = parsed.providerId;
  const { subscriptionId, resourceGroup, name } =
    resource.kind === 'scale-set-instance' ? resource.scaleSet : resource.virtualMachine;
  if (!GUID_RULE.test(subscriptionId) || !RESOURCE_GROUP_RULE.test(resourceGroup)) return undefined;
  if (resource.kind === 'scale-set-instance') {
    if (!SCALE_SET_RULE.test(name) || !/^\d{1,10}$/.test(resource.instanceId)) return undefined;
    return {
      kind: 'scale-set-instance',
      subscriptionId,
      resourceGroup,
      scaleSet: name,
      instanceId: resource.instanceId,
    };
  }
  if (!VM_NAME.test(name)) return undefined;
  return { kind: 'virtual-machine', subscriptionId, resourceGroup, name };
}

/** The ARM id of a node's `azure:///…` providerID, when it names a VM. */
export function resourceIdOfProviderId(providerId: string | undefined): string | undefined {
  if (providerId === undefined || !providerId.toLowerCase().startsWith('azure://')) return undefined;
  const id = providerId.slice('azure://'.length);
  return parseVmResourceId(id) === undefined ? undefined : id;
}

const ResourceId = z.string().refine((value) => parseVmResourceId(value) !== undefined, {
  error: 'the ARM id of a virtual machine or scale-set instance',
});
const ClusterName = z.string().refine(IDENTIFIER_RULE.test, { error: IDENTIFIER_RULE.accepts });
const NodeName = z.string().refine(DNS_SUBDOMAIN_RULE.test, { error: DNS_SUBDOMAIN_RULE.accepts });

const NOTICE_SOURCES = ['health-resources', 'resource-action', 'cloud-event', 'kured'] as const;

/** The one message every reboot source becomes; the queue trigger applies it. */
export const RebootNotice = z
  .strictObject({
    schema: z.literal(REBOOT_NOTICE_SCHEMA),
    source: z.enum(NOTICE_SOURCES),
    cluster: ClusterName.optional(),
    resourceId: ResourceId.optional(),
    nodeName: NodeName.optional(),
    vmId: z.string().max(64).optional(),
    /** When the reboot happened, as the source reports it (RFC 3339). */
    observedAt: Timestamp,
    /** The source event's id (or a derived one): for logs and deduplication. */
    eventId: EventId,
    /** What made it a reboot: the annotation, operation or message. */
    detail: z.string().max(200).optional(),
  })
  .refine(
    (notice) =>
      notice.resourceId !== undefined || (notice.nodeName !== undefined && notice.cluster !== undefined),
    {
      error: 'a resourceId, or a nodeName with its cluster',
    },
  );
export type RebootNotice = z.output<typeof RebootNotice>;

export type RejectionReason =
  | 'malformed'
  | 'unknown-event-type'
  | 'not-a-reboot'
  | 'not-a-vm'
  | 'validation-handshake'
  | 'unknown-cluster'
  | 'foreign-subscription'
  | 'unconfigured-resource-group'
  | 'unknown-scale-set'
  | 'pool-disabled';

export interface Rejection {
  readonly ok: false;
  readonly reason: RejectionReason;
  readonly message: string;
}

export type NoticeResult = { readonly ok: true; readonly notice: RebootNotice } | Rejection;

function reject(reason: RejectionReason, message: string): Rejection {
  return { ok: false, reason, message };
}

/** An event envelope, whichever schema delivered it (the Event Grid adapter fills it). */
export interface EventEnvelope {
  readonly schema: 'eventgrid' | 'cloudevents';
  readonly id: string;
  readonly type: string;
  readonly subject?: string;
  readonly time?: string;
  readonly data: unknown;
}

const EventGridEnvelope = z.object({
  id: EventId,
  eventType: z.string().min(1).max(256),
  subject: z.string().max(1024),
  eventTime: z.union([Timestamp, z.date()]),
  data: z.unknown(),
  dataVersion: z.string().max(64),
  topic: z.string().max(1024).optional(),
  metadataVersion: z.string().max(16).optional(),
});

const CloudEventEnvelope = z.object({
  specversion: z.literal('1.0'),
  id: EventId,
  type: z.string().min(1).max(256),
  source: z.string().min(1).max(1024),
  subject: z.string().max(1024).optional(),
  time: z.union([Timestamp, z.date()]).optional(),
  data: z.unknown().optional(),
});

function isoOf(value: string | Date | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : Number.isNaN(value.getTime()) ? undefined : value.toISOString();
}

/** What the Event Grid adapter hands over: the fields of one event, or why the SDK refused it. */
export type DecodedEvent =
  | { readonly ok: true; readonly fields: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly message: string };

/** The envelope of an event the adapter decoded; an event the SDK refused is `malformed`. */
export function envelopeOfDecoded(decoded: DecodedEvent): EventEnvelope | Rejection {
  return decoded.ok ? envelopeOf(decoded.fields) : reject('malformed', decoded.message);
}

/** Reads an Event Grid or CloudEvents envelope (already decoded from JSON); undefined when it is neither. */
export function envelopeOf(value: unknown): EventEnvelope | Rejection {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return reject('malformed', 'an event must be a JSON object');
  }
  if ('specversion' in value) {
    const parsed = CloudEventEnvelope.safeParse(value);
    if (!parsed.success) return reject('malformed', `reading CloudEvent: ${issuesOf(parsed.error)}`);
    const event = parsed.data;
    const time = isoOf(event.time);
    return {
      schema: 'cloudevents',
      id: event.id,
      type: event.type,
      ...definedOnly({ subject: event.subject, time }),
      data: event.data,
    };
  }
  const parsed = EventGridEnvelope.safeParse(value);
  if (!parsed.success) return reject('malformed', `reading Event Grid event: ${issuesOf(parsed.error)}`);
  const event = parsed.data;
  const time = isoOf(event.eventTime);
  return {
    schema: 'eventgrid',
    id: event.id,
    type: event.eventType,
    subject: event.subject,
    ...definedOnly({ time }),
    data: event.data,
  };
}

/** Health Resources data (dataVersion 2023-12-01); only the fields we use. */
const HealthResourcesData = z.object({
  resourceInfo: z.object({
    properties: z.object({
      targetResourceId: z.string().max(MAX_RESOURCE_ID),
      occurredTime: Timestamp.optional(),
      availabilityState: z.string().max(64).optional(),
      previousAvailabilityState: z.string().max(64).optional(),
      annotationName: z.string().max(128).optional(),
    }),
  }),
});
export type HealthResourcesData = z.output<typeof HealthResourcesData>;

const ResourceActionData = z.object({
  operationName: z.string().max(256),
  resourceUri: z.string().max(MAX_RESOURCE_ID).optional(),
});
export type ResourceActionData = z.output<typeof ResourceActionData>;

const NodeRebootedData = z.strictObject({
  cluster: ClusterName.optional(),
  nodeName: NodeName.optional(),
  resourceId: z.string().max(MAX_RESOURCE_ID).optional(),
  vmId: z.string().max(64).optional(),
  rebootedAt: Timestamp.optional(),
});
export type NodeRebootedData = z.output<typeof NodeRebootedData>;

function issuesOf(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length === 0 ? '(event)' : issue.path.join('.')}: ${issue.message}`)
    .join('; ');
}

function vmNotice(
  source: RebootNotice['source'],
  envelope: EventEnvelope,
  resourceId: string,
  observedAt: string | undefined,
  detail: string,
  receivedAt: Date,
): NoticeResult {
  if (parseVmResourceId(resourceId) === undefined) {
    return reject(
      'not-a-vm',
      `event ${envelope.id} concerns ${clip(resourceId)}, which is not a virtual machine`,
    );
  }
  return {
    ok: true,
    notice: {
      schema: REBOOT_NOTICE_SCHEMA,
      source,
      resourceId,
      observedAt: observedAt ?? envelope.time ?? receivedAt.toISOString(),
      eventId: envelope.id,
      detail,
    },
  };
}

/**
 * Normalizes one event envelope. Only events that say a VM came back from a reboot become notices;
 * everything else is a Rejection the caller logs and drops.
 */
export function normalizeEnvelope(envelope: EventEnvelope, receivedAt: Date): NoticeResult {
  switch (envelope.type) {
    case SUBSCRIPTION_VALIDATION:
      return reject('validation-handshake', `event ${envelope.id} is a subscription validation handshake`);
    case HEALTH_AVAILABILITY_CHANGED:
    case HEALTH_RESOURCE_ANNOTATED: {
      const parsed = HealthResourcesData.safeParse(envelope.data);
      if (!parsed.success)
        return reject('malformed', `reading ${envelope.type} data: ${issuesOf(parsed.error)}`);
      const properties = parsed.data.resourceInfo.properties;
      if (envelope.type === HEALTH_RESOURCE_ANNOTATED) {
        const annotation = properties.annotationName ?? '';
        if (!REBOOT_ANNOTATIONS.has(annotation)) {
          return reject('not-a-reboot', `annotation ${clip(annotation) || '(none)'} is not a guest reboot`);
        }
        return vmNotice(
          'health-resources',
          envelope,
          properties.targetResourceId,
          properties.occurredTime,
          annotation,
          receivedAt,
        );
      }
      // Back to Available from anything else: the VM is up again. The way down says nothing yet.
      if (
        properties.availabilityState !== 'Available' ||
        properties.previousAvailabilityState === 'Available'
      ) {
        return reject(
          'not-a-reboot',
          `availability ${clip(properties.previousAvailabilityState ?? '?')} → ${clip(properties.availabilityState ?? '?')} is not a return from a reboot`,
        );
      }
      return vmNotice(
        'health-resources',
        envelope,
        properties.targetResourceId,
        properties.occurredTime,
        `availability ${properties.previousAvailabilityState ?? 'unknown'} → Available`,
        receivedAt,
      );
    }
    case RESOURCE_ACTION_SUCCESS: {
      const parsed = ResourceActionData.safeParse(envelope.data);
      if (!parsed.success)
        return reject('malformed', `reading ${envelope.type} data: ${issuesOf(parsed.error)}`);
      if (!REBOOT_OPERATIONS.has(parsed.data.operationName.toLowerCase())) {
        return reject(
          'not-a-reboot',
          `operation ${clip(parsed.data.operationName)} is not a restart or reimage`,
        );
      }
      const resourceId = parsed.data.resourceUri ?? envelope.subject ?? '';
      return vmNotice(
        'resource-action',
        envelope,
        resourceId,
        envelope.time,
        parsed.data.operationName,
        receivedAt,
      );
    }
    case NODE_REBOOTED_CLOUD_EVENT: {
      const parsed = NodeRebootedData.safeParse(envelope.data);
      if (!parsed.success)
        return reject('malformed', `reading ${envelope.type} data: ${issuesOf(parsed.error)}`);
      const data = parsed.data;
      if (data.resourceId !== undefined) {
        return vmNotice(
          'cloud-event',
          envelope,
          data.resourceId,
          data.rebootedAt,
          'node rebooted',
          receivedAt,
        );
      }
      if (data.nodeName === undefined || data.cluster === undefined) {
        return reject(
          'malformed',
          `event ${envelope.id} names neither a resourceId nor a nodeName with its cluster`,
        );
      }
      return {
        ok: true,
        notice: {
          schema: REBOOT_NOTICE_SCHEMA,
          source: 'cloud-event',
          cluster: data.cluster,
          nodeName: data.nodeName,
          ...definedOnly({ vmId: data.vmId }),
          observedAt: data.rebootedAt ?? envelope.time ?? receivedAt.toISOString(),
          eventId: envelope.id,
          detail: 'node rebooted',
        },
      };
    }
    default:
      return reject('unknown-event-type', `event type ${clip(envelope.type)} is not a reboot notice`);
  }
}

/** kured's shoutrrr `generic` webhook body (`template=json`):
 * https://containrrr.dev/shoutrrr/v0.8/services/generic/ */
export const KuredWebhook = z.object({
  title: z.string().max(256).optional(),
  message: z.string().min(1).max(1024),
});
export type KuredWebhook = z.output<typeof KuredWebhook>;

/** kured's default uncordon message (`--message-template-uncordon`); drain/reboot messages come earlier. */
const KURED_UNCORDONED = /^Node (\S+) rebooted & uncordoned successfully!?$/;

/**
 * A kured notification as a notice. Only the uncordon message means the node is back; "Draining node x"
 * and "Rebooting node x" are rejected as not-a-reboot (the node is on its way down).
 */
export function normalizeKuredWebhook(
  body: KuredWebhook,
  cluster: string,
  eventId: string,
  receivedAt: Date,
): NoticeResult {
  const match = KURED_UNCORDONED.exec(body.message.trim());
  const nodeName = match?.[1];
  if (nodeName === undefined) {
    return reject('not-a-reboot', `kured message "${clip(body.message)}" does not say a node is back`);
  }
  if (!DNS_SUBDOMAIN_RULE.test(nodeName)) {
    return reject('malformed', `kured message names "${clip(nodeName)}", which is not a node name`);
  }
  return {
    ok: true,
    notice: {
      schema: REBOOT_NOTICE_SCHEMA,
      source: 'kured',
      cluster,
      nodeName,
      observedAt: receivedAt.toISOString(),
      eventId,
      detail: 'kured: rebooted & uncordoned',
    },
  };
}

/** What the queue trigger may receive in one message: one item, or an array of them. */
export type QueueItem =
  | { readonly kind: 'notice'; readonly notice: RebootNotice }
  | { readonly kind: 'event'; readonly event: unknown }
  | Rejection;

const MAX_ITEMS_PER_MESSAGE = 100;

/**
 * Decodes a queue message: plain JSON or base64 JSON (Event Grid's storage-queue delivery has been
 * seen both ways; functions/triggers/README.md), an object already parsed by the host, one item or an array.
 */
export function decodeQueueMessage(entry: unknown): QueueItem[] {
  let value: unknown = entry;
  if (Buffer.isBuffer(entry)) value = entry.toString('utf8');
  if (typeof value === 'string') {
    const text = value.trim();
    const json = text.startsWith('{') || text.startsWith('[') ? text : base64Text(text);
    if (json === undefined)
      return [reject('malformed', 'the message is neither JSON nor base64-encoded JSON')];
    try {
      value = JSON.parse(json);
    } catch {
      return [reject('malformed', 'the message is not valid JSON')];
    }
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return [reject('malformed', 'the message is an empty array')];
  if (items.length > MAX_ITEMS_PER_MESSAGE) {
    return [
      reject('malformed', `the message holds ${items.length} events (at most ${MAX_ITEMS_PER_MESSAGE})`),
    ];
  }
  return items.map((item): QueueItem => {
    if (
      typeof item === 'object' &&
      item !== null &&
      (item as { schema?: unknown }).schema === REBOOT_NOTICE_SCHEMA
    ) {
      const parsed = RebootNotice.safeParse(item);
      return parsed.success
        ? { kind: 'notice', notice: parsed.data }
        : reject('malformed', `reading reboot notice: ${issuesOf(parsed.error)}`);
    }
    return { kind: 'event', event: item };
  });
}

function base64Text(text: string): string | undefined {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const decoded = Buffer.from(text, 'base64').toString('utf8').trim();
  return decoded.startsWith('{') || decoded.startsWith('[') ? decoded : undefined;
}

/** A configured cluster as far as notices need it (the shape of Settings' clusters). */
export interface NoticeClusterScope {
  readonly name: string;
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly pools:
    | 'all'
    | readonly {
        readonly name: string;
        readonly scaleSet: string;
        readonly resourceGroup: string;
        readonly enabled: boolean;
      }[];
}

export type PoolTargetResult =
  { readonly ok: true; readonly cluster: string; readonly pool: string } | Rejection;

/**
 * The scale set ARM records a Flexible member VM in (its `virtualMachineScaleSet.id`, asked through the
 * compute ports of `cluster`, pool-membership.ts `scaleSetOfVirtualMachine`); undefined for a standalone
 * VM or one that is gone. A VM's name says nothing about its scale set.
 */
export type FlexibleMembership = (cluster: string, vm: VirtualMachineRef) => Promise<ScaleSetRef | undefined>;

/**
 * Maps a VM's ARM id to the configured cluster and pool that owns its scale set. `cluster`, when the
 * source named one (kured), restricts the search to it. Pools `all` are named after the scale set
 * (lowercase) and live in the cluster's resource group. A Uniform instance's id names its scale set; a
 * Flexible member's scale set is asked of ARM (`membership`), and only for a VM in a resource group that
 * holds a configured pool. Throws only what `membership` throws as transient.
 */
export async function resolvePoolTarget(
  resourceId: string,
  clusters: readonly NoticeClusterScope[],
  cluster: string | undefined,
  membership: FlexibleMembership,
): Promise<PoolTargetResult> {
  const vm = parseVmResourceId(resourceId);
  if (vm === undefined)
    return reject('not-a-vm', `${clip(resourceId)} is not the ARM id of a virtual machine`);
  const candidates = cluster === undefined ? clusters : clusters.filter((c) => c.name === cluster);
  if (candidates.length === 0)
    return reject('unknown-cluster', `cluster ${clip(cluster ?? '')} is not configured`);
  const sameSubscription = candidates.filter(
    (c) => c.subscriptionId.toLowerCase() === vm.subscriptionId.toLowerCase(),
  );
  if (sameSubscription.length === 0) {
    return reject(
      'foreign-subscription',
      `subscription ${vm.subscriptionId} belongs to no configured cluster`,
    );
  }
  const group = vm.resourceGroup.toLowerCase();
  const holdsGroup = (candidate: NoticeClusterScope): boolean =>
    candidate.pools === 'all'
      ? candidate.resourceGroup.toLowerCase() === group
      : candidate.pools.some((pool) => pool.resourceGroup.toLowerCase() === group);
  const asker = sameSubscription.find(holdsGroup);
  if (asker === undefined) {
    return reject(
      'unconfigured-resource-group',
      `resource group ${vm.resourceGroup} holds no configured pool`,
    );
  }
  let scaleSet: string;
  let scaleSetGroup = group;
  if (vm.kind === 'scale-set-instance') {
    scaleSet = vm.scaleSet;
  } else {
    let owner: ScaleSetRef | undefined;
    try {
      owner = await membership(asker.name, vm);
    } catch (error) {
      if (!isTerminal(error)) throw error;
      return reject(
        'unknown-scale-set',
        `reading the scale set of ${clip(resourceId)}: ${clip(error.message)}`,
      );
    }
    if (owner === undefined) {
      return reject('unknown-scale-set', `${clip(resourceId)} is in no scale set (ARM records none)`);
    }
    scaleSet = owner.name;
    // A Flexible member may live outside its scale set's resource group: the pool is the scale set's.
    scaleSetGroup = owner.resourceGroup.toLowerCase();
  }
  for (const candidate of sameSubscription) {
    if (candidate.pools === 'all') {
      if (candidate.resourceGroup.toLowerCase() !== scaleSetGroup) continue;
      return { ok: true, cluster: candidate.name, pool: scaleSet.toLowerCase() };
    }
    for (const pool of candidate.pools) {
      if (pool.resourceGroup.toLowerCase() !== scaleSetGroup) continue;
      if (pool.scaleSet.toLowerCase() !== scaleSet.toLowerCase()) continue;
      if (!pool.enabled)
        return reject('pool-disabled', `pool ${pool.name} of cluster ${candidate.name} is disabled`);
      return { ok: true, cluster: candidate.name, pool: pool.name };
    }
  }
  return reject('unknown-scale-set', `scale set ${scaleSet} in ${vm.resourceGroup} is no configured pool`);
}

/** Bounds what a log line repeats of untrusted input. */
function clip(value: string): string {
  const printable = [...value].map((char) => (hasControlCharacters(char) ? '?' : char)).join('');
  return printable.length > 120 ? `${printable.slice(0, 120)}…` : printable;
}

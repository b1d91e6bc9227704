/**
 * ARM routes of the disk resource provider: managed disks (read) and snapshots (list, get, PUT as a
 * `Copy` of a disk or snapshot with ARM's linked access check, delete).
 */
import { z } from 'zod';

import { invalidParameter, parseBody, type Reply, type RequestContext, Tags } from './arm-http.js';
import { renderDisk, renderSnapshot } from './arm-resources.js';
import { type AddRoute, ArmRoutes } from './arm-routes.js';
import { idKey } from './compute-state.js';

const SnapshotPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  sku: z.looseObject({ name: z.string().optional() }).optional(),
  properties: z.looseObject({
    creationData: z.looseObject({ createOption: z.string(), sourceResourceId: z.string().optional() }),
    incremental: z.boolean().optional(),
  }),
});

export class DiskRoutes extends ArmRoutes {
  register(add: AddRoute): void {
    add('GET', 'disks', 'disk', 'Microsoft.Compute/disks/read', 'disks', (c) => this.listDisks(c));
    add('GET', 'disks/:disk', 'disk', 'Microsoft.Compute/disks/read', 'disks', (c) => this.getDisk(c));
    add('GET', 'snapshots', 'disk', 'Microsoft.Compute/snapshots/read', 'snapshots', (c) =>
      this.listSnapshots(c),
    );
    add('GET', 'snapshots/:snapshot', 'disk', 'Microsoft.Compute/snapshots/read', 'snapshots', (c) =>
      this.getSnapshot(c),
    );
    add(
      'PUT',
      'snapshots/:snapshot',
      'disk',
      'Microsoft.Compute/snapshots/write',
      'snapshots',
      (c) => this.putSnapshot(c),
      {
        lro: true,
      },
    );
    add(
      'DELETE',
      'snapshots/:snapshot',
      'disk',
      'Microsoft.Compute/snapshots/delete',
      'snapshots',
      (c) => this.deleteSnapshot(c),
      { lro: true },
    );
  }

  // ------------------------------------------------------------------ disks and snapshots

  private listDisks(context: RequestContext): Reply {
    const items = this.state
      .listDisks(context.subscriptionId, context.resourceGroup)
      .map((disk) => renderDisk(this.state, disk.id))
      .filter((item) => item !== undefined);
    return this.page(context, items);
  }

  private getDisk(context: RequestContext): Reply {
    const body = renderDisk(this.state, this.resourceId(context, 'disks', context.params.disk ?? ''));
    if (!body) throw this.resourceNotFound(context, 'Microsoft.Compute/disks', context.params.disk ?? '');
    return { status: 200, body };
  }

  private listSnapshots(context: RequestContext): Reply {
    const prefix = idKey(`/subscriptions/${context.subscriptionId}/resourceGroups/${context.resourceGroup}/`);
    const items = this.state
      .listSnapshots(context.resourceGroup)
      .filter((snapshot) => idKey(snapshot.id).startsWith(prefix))
      .map((snapshot) => renderSnapshot(snapshot));
    return this.page(context, items);
  }

  private getSnapshot(context: RequestContext): Reply {
    const snapshot = this.state.getSnapshot(
      this.resourceId(context, 'snapshots', context.params.snapshot ?? ''),
    );
    if (!snapshot)
      throw this.resourceNotFound(context, 'Microsoft.Compute/snapshots', context.params.snapshot ?? '');
    return { status: 200, body: renderSnapshot(snapshot) };
  }

  private putSnapshot(context: RequestContext): Reply {
    const body = parseBody(SnapshotPut, context.body);
    const creation = body.properties.creationData;
    if (creation.createOption !== 'Copy') {
      throw invalidParameter(
        `The value '${creation.createOption}' of parameter 'creationData.createOption' is not supported by this simulator; use 'Copy'.`,
        'creationData.createOption',
      );
    }
    if (!creation.sourceResourceId) {
      throw invalidParameter(
        "Required parameter 'creationData.sourceResourceId' is missing (null).",
        'creationData.sourceResourceId',
      );
    }
    const sourceIsSnapshot = /\/providers\/Microsoft\.Compute\/snapshots\//i.test(creation.sourceResourceId);
    this.authorizeLinked(
      context,
      sourceIsSnapshot ? 'Microsoft.Compute/snapshots/read' : 'Microsoft.Compute/disks/read',
      creation.sourceResourceId,
    );
    const name = context.params.snapshot ?? '';
    const id = this.resourceId(context, 'snapshots', name);
    const existed = this.state.getSnapshot(id) !== undefined;
    const { operation, failure, done } = this.beginOperation(
      context,
      body.location,
      this.options.latency.snapshotCreateSeconds,
    );
    const snapshot = this.state.createSnapshot(
      context.subscriptionId,
      context.resourceGroup,
      name,
      {
        location: body.location,
        sourceResourceId: creation.sourceResourceId,
        incremental: body.properties.incremental ?? false,
        ...(body.sku?.name ? { skuName: body.sku.name } : {}),
        tags: body.tags ?? {},
      },
      done,
      failure,
    );
    // The disk RP answers a new copy 202 Accepted without a body (never 201: strict SDKs refuse it),
    // a re-PUT of an existing snapshot 200 with the resource.
    if (!existed) return { status: 202, headers: this.operationHeaders(context, operation, true) };
    return {
      status: 200,
      body: renderSnapshot(snapshot),
      headers: this.operationHeaders(context, operation, true),
    };
  }

  private deleteSnapshot(context: RequestContext): Reply {
    const id = this.resourceId(context, 'snapshots', context.params.snapshot ?? '');
    const snapshot = this.state.getSnapshot(id);
    if (!snapshot) return { status: 204 };
    const seconds = this.options.latency.snapshotDeleteSeconds;
    const { operation, failure, done } = this.beginOperation(context, snapshot.location, seconds);
    this.state.deleteSnapshot(id, done, failure);
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }
}

/**
 * The tests' own CustomResourceDefinitions: a cluster-scoped `PoolImagePolicy` in the group
 * `policies.sim.test` (spec with defaults, an enum, bounds and a pattern; a status subresource;
 * printer columns for the pool, version, freshness, a condition and the age) and a namespaced
 * `Widget`, so the simulator's CRD support is tested without the product's CRD.
 */
import type { KubeObject } from '../../../sim/contracts.js';

export const GROUP = 'policies.sim.test';
export const VERSION = 'v1alpha1';
export const PLURAL = 'poolimagepolicies';
export const CRD_NAME = `${PLURAL}.${GROUP}`;

export function poolImagePolicyCrd(): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: GROUP,
      scope: 'Cluster',
      names: { plural: PLURAL, singular: 'poolimagepolicy', kind: 'PoolImagePolicy', shortNames: ['pip'] },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Pool', type: 'string', jsonPath: '.spec.pool' },
            { name: 'Version', type: 'string', jsonPath: '.status.currentVersion' },
            { name: 'Freshness', type: 'integer', jsonPath: '.status.freshnessDays', priority: 1 },
            { name: 'Fresh', type: 'string', jsonPath: '.status.conditions[?(@.type=="Fresh")].status' },
            { name: 'Last Run', type: 'date', jsonPath: '.status.lastRun.at' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'PoolImagePolicy declares how one node pool keeps its OS image fresh.',
              properties: {
                spec: {
                  type: 'object',
                  description: 'What the pool should do.',
                  required: ['pool'],
                  properties: {
                    pool: {
                      type: 'string',
                      description: 'The pool this policy is for.',
                      maxLength: 30,
                      pattern: '^[a-z][a-z0-9-]*$',
                    },
                    captureMode: { type: 'string', enum: ['live', 'offline'], default: 'offline' },
                    keepGenerations: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
                    paused: { type: 'boolean', default: false },
                    canary: {
                      type: 'object',
                      properties: { nodes: { type: 'integer', minimum: 0, default: 1 } },
                    },
                    labels: { type: 'object', additionalProperties: { type: 'string' } },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    currentVersion: { type: 'string' },
                    freshnessDays: { type: 'integer' },
                    lastRun: { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } },
                    conditions: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['type'],
                      items: {
                        type: 'object',
                        required: ['type', 'status'],
                        properties: {
                          type: { type: 'string' },
                          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
                          reason: { type: 'string' },
                          message: { type: 'string' },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

export function widgetCrd(): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

export function policy(name: string, spec: Record<string, unknown> = { pool: name }): KubeObject {
  return { apiVersion: `${GROUP}/${VERSION}`, kind: 'PoolImagePolicy', metadata: { name }, spec };
}

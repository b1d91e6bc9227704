/**
 * Reads the ARM template the Bicep compiler makes of infra/main.bicep: every module is a nested
 * Microsoft.Resources/deployments resource with its own template (an array of resources in language
 * version 1, an object keyed by symbolic name in 2.0).
 */

import { z } from 'zod';

export const DEPLOYMENTS = 'Microsoft.Resources/deployments';

const ArmResourceSchema = z.looseObject({
  type: z.string(),
  apiVersion: z.string(),
  name: z.string(),
  existing: z.boolean().optional(),
  scope: z.string().optional(),
  resourceGroup: z.string().optional(),
  condition: z.union([z.string(), z.boolean()]).optional(),
  copy: z.looseObject({ name: z.string(), count: z.union([z.string(), z.number()]) }).optional(),
  properties: z.unknown().optional(),
});

export type ArmResource = z.infer<typeof ArmResourceSchema>;

const ArmParameterSchema = z.looseObject({
  type: z.string(),
  defaultValue: z.unknown().optional(),
  metadata: z.looseObject({ description: z.string().optional() }).optional(),
});

const ArmOutputSchema = z.looseObject({ type: z.string(), value: z.unknown() });

const ArmTemplateSchema = z.looseObject({
  $schema: z.string(),
  languageVersion: z.string().optional(),
  parameters: z.record(z.string(), ArmParameterSchema).default({}),
  variables: z.record(z.string(), z.unknown()).default({}),
  resources: z.union([z.array(ArmResourceSchema), z.record(z.string(), ArmResourceSchema)]),
  outputs: z.record(z.string(), ArmOutputSchema).default({}),
});

export type ArmTemplate = z.infer<typeof ArmTemplateSchema>;

export function parseTemplate(json: unknown): ArmTemplate {
  return ArmTemplateSchema.parse(json);
}

export interface TemplateResource {
  /** The symbolic name (language version 2.0), or undefined. */
  readonly symbol: string | undefined;
  readonly resource: ArmResource;
}

export function resourcesOf(template: ArmTemplate): TemplateResource[] {
  if (Array.isArray(template.resources)) {
    return template.resources.map((resource) => ({ symbol: undefined, resource }));
  }
  return Object.entries(template.resources).map(([symbol, resource]) => ({ symbol, resource }));
}

export interface DeployedResource extends TemplateResource {
  /** The chain of deployment names from the top, e.g. ['vmssp-rbac']; [] for the top-level template. */
  readonly modulePath: readonly string[];
  /** The template that declares the resource. */
  readonly template: ArmTemplate;
}

/** The nested template of a module deployment. */
export function moduleTemplateOf(deployment: ArmResource): ArmTemplate {
  const properties = z.looseObject({ template: z.unknown() }).parse(deployment.properties);
  return parseTemplate(properties.template);
}

/** Every resource of the template and of every module in it, depth first. */
export function allResources(template: ArmTemplate, modulePath: readonly string[] = []): DeployedResource[] {
  return resourcesOf(template).flatMap(({ symbol, resource }) => {
    const here: DeployedResource = { symbol, resource, modulePath, template };
    if (resource.type !== DEPLOYMENTS) return [here];
    return [here, ...allResources(moduleTemplateOf(resource), [...modulePath, resource.name])];
  });
}

/** Resources the deployment creates or updates (not `existing` references, not module deployments). */
export function deployedResources(template: ArmTemplate): DeployedResource[] {
  return allResources(template).filter(
    ({ resource }) => resource.existing !== true && resource.type !== DEPLOYMENTS,
  );
}

/** The top-level module deployment with this symbolic name. */
export function moduleDeployment(template: ArmTemplate, symbol: string): ArmResource {
  const found = resourcesOf(template).find((entry) => entry.symbol === symbol);
  if (found === undefined || found.resource.type !== DEPLOYMENTS) {
    throw new Error(`reading the compiled template: no module ${symbol}`);
  }
  return found.resource;
}

/**
 * The parameter values main passes to a module, as written in the compiled template. A value read from a
 * conditional module (`cond ? module!.outputs.x : ''`) compiles to one expression that builds the whole
 * `{ value }` entry (`[if(cond, createObject('value', …), createObject('value', ''))]`): that expression is
 * returned as it is.
 */
export function moduleParameters(deployment: ArmResource): Record<string, unknown> {
  const properties = z
    .looseObject({
      parameters: z
        .record(z.string(), z.union([z.looseObject({ value: z.unknown() }), z.string()]))
        .default({}),
    })
    .parse(deployment.properties);
  return Object.fromEntries(
    Object.entries(properties.parameters).map(([name, entry]) => [
      name,
      typeof entry === 'string' ? entry : entry.value,
    ]),
  );
}

/** The single resource of `type` in a template (throws when there is not exactly one). */
export function onlyResource(template: ArmTemplate, type: string): ArmResource {
  const found = resourcesOf(template).filter(
    (entry) => entry.resource.type === type && entry.resource.existing !== true,
  );
  if (found.length !== 1 || found[0] === undefined) {
    throw new Error(`reading the compiled template: ${found.length} resources of type ${type}, expected 1`);
  }
  return found[0].resource;
}

/** A property path of an object, e.g. prop(resource, 'properties', 'siteConfig'). Undefined when absent. */
export function prop(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

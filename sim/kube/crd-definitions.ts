/**
 * OpenAPI definitions of apiextensions.k8s.io/v1 CustomResourceDefinition and the types it holds, in
 * the Kubernetes naming (`io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.…`), for
 * `kubectl explain crd`, kubectl's validation and the server's field pruning of CRDs
 * (openapi-schemas.ts adds them to its definitions). Written from the API reference
 * (https://kubernetes.io/docs/reference/kubernetes-api/extend-resources/custom-resource-definition-v1/);
 * `JSONSchemaPropsOrArray`/`OrBool` are given as JSONSchemaProps and left open respectively.
 */
type Schema = Record<string, unknown>;

export const APIEXTENSIONS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

function ref(name: string, description: string): Schema {
  return { description, allOf: [{ $ref: `#/definitions/${name}` }], default: {} };
}
const str = (description: string): Schema => ({ description, type: 'string' });
const bool = (description: string): Schema => ({ description, type: 'boolean' });
const int = (description: string): Schema => ({ description, type: 'integer', format: 'int64' });
const num = (description: string): Schema => ({ description, type: 'number', format: 'double' });
const strings = (description: string): Schema => ({
  description,
  type: 'array',
  items: { type: 'string', default: '' },
});
const json = (description: string): Schema => ({ description });
const list = (description: string, item: string): Schema => ({
  description,
  type: 'array',
  items: { allOf: [{ $ref: `#/definitions/${item}` }], default: {} },
});
const map = (description: string, item: string): Schema => ({
  description,
  type: 'object',
  additionalProperties: { allOf: [{ $ref: `#/definitions/${item}` }], default: {} },
});
function object(description: string, properties: Record<string, Schema>, extra: Schema = {}): Schema {
  return { description, type: 'object', properties, ...extra };
}

const PROPS = `${APIEXTENSIONS}.JSONSchemaProps`;
const GVK = { group: 'apiextensions.k8s.io', version: 'v1' };

export const CRD_DEFINITIONS: Readonly<Record<string, Schema>> = {
  [`${APIEXTENSIONS}.CustomResourceDefinition`]: object(
    'CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.',
    {
      apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
      kind: str('Kind is a string value representing the REST resource this object represents.'),
      metadata: ref(`${META}.ObjectMeta`, "Standard object's metadata."),
      spec: ref(
        `${APIEXTENSIONS}.CustomResourceDefinitionSpec`,
        'spec describes how the user wants the resources to appear',
      ),
      status: ref(
        `${APIEXTENSIONS}.CustomResourceDefinitionStatus`,
        'status indicates the actual state of the CustomResourceDefinition',
      ),
    },
    { required: ['spec'], 'x-kubernetes-group-version-kind': [{ ...GVK, kind: 'CustomResourceDefinition' }] },
  ),
  [`${APIEXTENSIONS}.CustomResourceDefinitionList`]: object(
    'CustomResourceDefinitionList is a list of CustomResourceDefinition objects.',
    {
      apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
      kind: str('Kind is a string value representing the REST resource this object represents.'),
      metadata: ref(`${META}.ListMeta`, "Standard object's metadata."),
      items: list(
        'items list individual CustomResourceDefinition objects',
        `${APIEXTENSIONS}.CustomResourceDefinition`,
      ),
    },
    {
      required: ['items'],
      'x-kubernetes-group-version-kind': [{ ...GVK, kind: 'CustomResourceDefinitionList' }],
    },
  ),
  [`${APIEXTENSIONS}.CustomResourceDefinitionSpec`]: object(
    'CustomResourceDefinitionSpec describes how a user wants their resource to appear',
    {
      group: str(
        'group is the API group of the defined custom resource. Must match the name of the CustomResourceDefinition (in the form `<names.plural>.<group>`).',
      ),
      names: ref(
        `${APIEXTENSIONS}.CustomResourceDefinitionNames`,
        'names specify the resource and kind names for the custom resource.',
      ),
      scope: str(
        'scope indicates whether the defined custom resource is cluster- or namespace-scoped. Allowed values are `Cluster` and `Namespaced`.',
      ),
      versions: list(
        'versions is the list of all API versions of the defined custom resource.',
        `${APIEXTENSIONS}.CustomResourceDefinitionVersion`,
      ),
      conversion: ref(
        `${APIEXTENSIONS}.CustomResourceConversion`,
        'conversion defines conversion settings for the CRD.',
      ),
      preserveUnknownFields: bool(
        'preserveUnknownFields indicates that object fields which are not specified in the OpenAPI schema should be preserved when persisting to storage.',
      ),
    },
    { required: ['group', 'names', 'scope', 'versions'] },
  ),
  [`${APIEXTENSIONS}.CustomResourceDefinitionNames`]: object(
    'CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition',
    {
      plural: str('plural is the plural name of the resource to serve. Must be all lowercase.'),
      singular: str(
        'singular is the singular name of the resource. It must be all lowercase. Defaults to lowercased `kind`.',
      ),
      shortNames: strings('shortNames are short names for the resource, exposed in API discovery documents.'),
      kind: str('kind is the serialized kind of the resource. It is normally CamelCase and singular.'),
      listKind: str(
        'listKind is the serialized kind of the list for this resource. Defaults to "`kind`List".',
      ),
      categories: strings(
        "categories is a list of grouped resources this custom resource belongs to (e.g. 'all').",
      ),
    },
    { required: ['plural', 'kind'] },
  ),
  [`${APIEXTENSIONS}.CustomResourceDefinitionVersion`]: object(
    'CustomResourceDefinitionVersion describes a version for CRD.',
    {
      name: str('name is the version name, e.g. “v1”, “v2beta1”, etc.'),
      served: bool('served is a flag enabling/disabling this version from being served via REST APIs'),
      storage: bool(
        'storage indicates this version should be used when persisting custom resources to storage. There must be exactly one version with storage=true.',
      ),
      deprecated: bool('deprecated indicates this version of the custom resource API is deprecated.'),
      deprecationWarning: str('deprecationWarning overrides the default warning returned to API clients.'),
      schema: ref(
        `${APIEXTENSIONS}.CustomResourceValidation`,
        'schema describes the schema used for validation, pruning, and defaulting of this version of the custom resource.',
      ),
      subresources: ref(
        `${APIEXTENSIONS}.CustomResourceSubresources`,
        'subresources specify what subresources this version of the defined custom resource have.',
      ),
      additionalPrinterColumns: list(
        'additionalPrinterColumns specifies additional columns returned in Table output.',
        `${APIEXTENSIONS}.CustomResourceColumnDefinition`,
      ),
      selectableFields: list(
        'selectableFields specifies paths to fields that may be used as field selectors.',
        `${APIEXTENSIONS}.SelectableField`,
      ),
    },
    { required: ['name', 'served', 'storage'] },
  ),
  [`${APIEXTENSIONS}.CustomResourceValidation`]: object(
    'CustomResourceValidation is a list of validation methods for CustomResources.',
    {
      openAPIV3Schema: ref(
        PROPS,
        'openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning.',
      ),
    },
  ),
  [`${APIEXTENSIONS}.CustomResourceSubresources`]: object(
    'CustomResourceSubresources defines the status and scale subresources for CustomResources.',
    {
      status: object('status indicates the custom resource should serve a `/status` subresource.', {}),
      scale: ref(
        `${APIEXTENSIONS}.CustomResourceSubresourceScale`,
        'scale indicates the custom resource should serve a `/scale` subresource.',
      ),
    },
  ),
  [`${APIEXTENSIONS}.CustomResourceSubresourceScale`]: object(
    'CustomResourceSubresourceScale defines how to serve the scale subresource for CustomResources.',
    {
      specReplicasPath: str(
        'specReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `spec.replicas`.',
      ),
      statusReplicasPath: str(
        'statusReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `status.replicas`.',
      ),
      labelSelectorPath: str(
        'labelSelectorPath defines the JSON path inside of a custom resource that corresponds to Scale `status.selector`.',
      ),
    },
    { required: ['specReplicasPath', 'statusReplicasPath'] },
  ),
  [`${APIEXTENSIONS}.CustomResourceColumnDefinition`]: object(
    'CustomResourceColumnDefinition specifies a column for server side printing.',
    {
      name: str('name is a human readable name for the column.'),
      type: str('type is an OpenAPI type definition for this column.'),
      format: str('format is an optional OpenAPI type definition for this column.'),
      description: str('description is a human readable description of this column.'),
      priority: {
        description:
          'priority is an integer defining the relative importance of this column compared to others.',
        type: 'integer',
        format: 'int32',
      },
      jsonPath: str(
        'jsonPath is a simple JSON path (i.e. with array notation) which is evaluated against each custom resource to produce the value for this column.',
      ),
    },
    { required: ['name', 'type', 'jsonPath'] },
  ),
  [`${APIEXTENSIONS}.SelectableField`]: object(
    'SelectableField specifies the JSON path of a field that may be used with field selectors.',
    {
      jsonPath: str(
        'jsonPath is a simple JSON path which is evaluated against each custom resource to produce a field selector value.',
      ),
    },
    { required: ['jsonPath'] },
  ),
  [`${APIEXTENSIONS}.CustomResourceConversion`]: object(
    'CustomResourceConversion describes how to convert different versions of a CR.',
    {
      strategy: str(
        'strategy specifies how custom resources are converted between versions. Allowed values are: - `"None"` - `"Webhook"`.',
      ),
      webhook: object(
        'webhook describes how to call the conversion webhook.',
        {},
        { 'x-kubernetes-preserve-unknown-fields': true },
      ),
    },
    { required: ['strategy'] },
  ),
  [`${APIEXTENSIONS}.CustomResourceDefinitionStatus`]: object(
    'CustomResourceDefinitionStatus indicates the state of the CustomResourceDefinition',
    {
      conditions: list(
        'conditions indicate state for particular aspects of a CustomResourceDefinition',
        `${APIEXTENSIONS}.CustomResourceDefinitionCondition`,
      ),
      acceptedNames: ref(
        `${APIEXTENSIONS}.CustomResourceDefinitionNames`,
        'acceptedNames are the names that are actually being used to serve discovery.',
      ),
      storedVersions: strings(
        'storedVersions lists all versions of CustomResources that were ever persisted.',
      ),
    },
  ),
  [`${APIEXTENSIONS}.CustomResourceDefinitionCondition`]: object(
    'CustomResourceDefinitionCondition contains details for the current condition of this pod.',
    {
      type: str(
        'type is the type of the condition. Types include Established, NamesAccepted and Terminating.',
      ),
      status: str('status is the status of the condition. Can be True, False, Unknown.'),
      lastTransitionTime: ref(
        `${META}.Time`,
        'lastTransitionTime last time the condition transitioned from one status to another.',
      ),
      reason: str("reason is a unique, one-word, CamelCase reason for the condition's last transition."),
      message: str('message is a human-readable message indicating details about last transition.'),
      observedGeneration: int(
        'observedGeneration represents the .metadata.generation that the condition was set based upon.',
      ),
    },
    { required: ['type', 'status'] },
  ),
  [`${APIEXTENSIONS}.ValidationRule`]: object(
    'ValidationRule describes a validation rule written in the CEL expression language.',
    {
      rule: str('Rule represents the expression which will be evaluated by CEL.'),
      message: str('Message represents the message displayed when validation fails.'),
      messageExpression: str(
        'MessageExpression declares a CEL expression that evaluates to the validation failure message.',
      ),
      reason: str('reason provides a machine-readable validation failure reason.'),
      fieldPath: str('fieldPath represents the field path returned when the validation fails.'),
      optionalOldSelf: bool(
        'optionalOldSelf is used to opt a transition rule into evaluation even when the object is first created.',
      ),
    },
    { required: ['rule'] },
  ),
  [PROPS]: object(
    'JSONSchemaProps is a JSON-Schema following Specification Draft 4 (http://json-schema.org/).',
    {
      id: str('id'),
      $schema: str('$schema'),
      $ref: str('$ref'),
      description: str('description'),
      type: str('type'),
      format: str('format is an OpenAPI v3 format string.'),
      title: str('title'),
      default: json('default is a default value for undefined object fields.'),
      maximum: num('maximum'),
      exclusiveMaximum: bool('exclusiveMaximum'),
      minimum: num('minimum'),
      exclusiveMinimum: bool('exclusiveMinimum'),
      maxLength: int('maxLength'),
      minLength: int('minLength'),
      pattern: str('pattern'),
      maxItems: int('maxItems'),
      minItems: int('minItems'),
      uniqueItems: bool('uniqueItems'),
      multipleOf: num('multipleOf'),
      enum: { description: 'enum', type: 'array', items: json('JSON represents any valid JSON value.') },
      maxProperties: int('maxProperties'),
      minProperties: int('minProperties'),
      required: strings('required'),
      items: ref(PROPS, 'items'),
      allOf: list('allOf', PROPS),
      oneOf: list('oneOf', PROPS),
      anyOf: list('anyOf', PROPS),
      not: ref(PROPS, 'not'),
      properties: map('properties', PROPS),
      additionalProperties: json('additionalProperties: a schema, or a boolean.'),
      patternProperties: map('patternProperties', PROPS),
      dependencies: {
        description: 'dependencies',
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
      },
      additionalItems: json('additionalItems: a schema, or a boolean.'),
      definitions: map('definitions', PROPS),
      externalDocs: {
        description: 'externalDocs',
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
      },
      example: json('example'),
      nullable: bool('nullable'),
      'x-kubernetes-preserve-unknown-fields': bool(
        'x-kubernetes-preserve-unknown-fields stops the API server decoding step from pruning fields which are not specified in the validation schema.',
      ),
      'x-kubernetes-embedded-resource': bool(
        'x-kubernetes-embedded-resource defines that the value is an embedded Kubernetes runtime.Object, with TypeMeta and ObjectMeta.',
      ),
      'x-kubernetes-int-or-string': bool(
        'x-kubernetes-int-or-string specifies that this value is either an integer or a string.',
      ),
      'x-kubernetes-list-map-keys': strings(
        'x-kubernetes-list-map-keys annotates an array with the x-kubernetes-list-type `map` by specifying the keys used as the index of the map.',
      ),
      'x-kubernetes-list-type': str(
        'x-kubernetes-list-type annotates an array to further describe its topology: atomic, set or map.',
      ),
      'x-kubernetes-map-type': str(
        'x-kubernetes-map-type annotates an object to further describe its topology: granular or atomic.',
      ),
      'x-kubernetes-validations': list(
        'x-kubernetes-validations describes a list of validation rules written in the CEL expression language.',
        `${APIEXTENSIONS}.ValidationRule`,
      ),
    },
  ),
};

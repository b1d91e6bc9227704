// The protobuf form of /openapi/v2: which form an Accept header gets, and that the gnostic Document
// encoding decodes back to the JSON document's content (read here with a small independent decoder
// over the field numbers of google/gnostic-models openapiv2/OpenAPIv2.proto).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { openApiV2Document } from '../../../sim/kube/openapi.js';
import { encodeOpenApiV2, negotiateOpenApiV2 } from '../../../sim/kube/openapi-protobuf.js';
import { bytes, named, protobufFields, text } from './protobuf-reader.js';

void describe('negotiateOpenApiV2', () => {
  const cases: [string, ReturnType<typeof negotiateOpenApiV2>][] = [
    ['', 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'protobuf'],
    ['application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'protobuf'],
    // client-go's v2 reader (kubectl 1.20–1.28): protobuf first, JSON as a fallback.
    ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json', 'protobuf'],
    ['application/json;q=0.9, application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'protobuf'],
    ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.5, application/json', 'json'],
    ['*/*;q=0.1, application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'protobuf'],
    ['application/vnd.kubernetes.protobuf', undefined],
    ['text/html', undefined],
    ['application/json;q=0', undefined],
  ];
  for (const [accept, expected] of cases) {
    void it(`answers ${String(expected)} to "${accept}"`, () => {
      assert.equal(negotiateOpenApiV2(accept), expected);
    });
  }
});

void describe('encodeOpenApiV2', () => {
  void it('encodes a small document field by field', () => {
    const encoded = encodeOpenApiV2({
      swagger: '2.0',
      info: { title: 'Kubernetes', version: 'v1.32.4' },
      paths: {
        '/api/v1/nodes': {
          get: {
            operationId: 'listNode',
            parameters: [{ name: 'limit', in: 'query', type: 'integer', uniqueItems: true }],
            responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/NodeList' } } },
            'x-kubernetes-action': 'list',
          },
        },
      },
      definitions: {
        Node: {
          type: 'object',
          required: ['metadata'],
          properties: { spec: { $ref: '#/definitions/NodeSpec' }, count: { type: 'integer', default: 3 } },
          'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Node' }],
        },
      },
    });

    assert.equal(text(encoded, 1), '2.0');
    const info = bytes(encoded, 2)[0] ?? Buffer.alloc(0);
    assert.deepEqual([text(info, 1), text(info, 2)], ['Kubernetes', 'v1.32.4']);
    const paths = named(bytes(encoded, 8)[0] ?? Buffer.alloc(0), 2);
    const get = bytes(paths.get('/api/v1/nodes') ?? Buffer.alloc(0), 2)[0] ?? Buffer.alloc(0);
    assert.equal(text(get, 5), 'listNode');
    const extension = named(get, 13).get('x-kubernetes-action') ?? Buffer.alloc(0);
    assert.equal(JSON.parse(text(extension, 2) ?? ''), 'list');
    // parameters[0] → Parameter (1) → NonBodyParameter (2) → QueryParameterSubSchema (3).
    const item = bytes(get, 8)[0] ?? Buffer.alloc(0);
    const query = bytes(bytes(bytes(item, 1)[0] ?? Buffer.alloc(0), 2)[0] ?? Buffer.alloc(0), 3)[0];
    assert.deepEqual(
      [text(query ?? Buffer.alloc(0), 4), text(query ?? Buffer.alloc(0), 6)],
      ['limit', 'integer'],
    );
    assert.equal(protobufFields(query ?? Buffer.alloc(0)).get(20)?.[0], 1);
    // responses → "200" → ResponseValue.response (1) → schema (2) → Schema (1) → _ref (1).
    const ok = named(bytes(get, 9)[0] ?? Buffer.alloc(0), 1).get('200') ?? Buffer.alloc(0);
    const response = bytes(ok, 1)[0] ?? Buffer.alloc(0);
    assert.equal(text(response, 1), 'OK');
    const schema = bytes(bytes(response, 2)[0] ?? Buffer.alloc(0), 1)[0] ?? Buffer.alloc(0);
    assert.equal(text(schema, 1), '#/definitions/NodeList');

    const node = named(bytes(encoded, 9)[0] ?? Buffer.alloc(0), 1).get('Node') ?? Buffer.alloc(0);
    assert.equal(text(bytes(node, 22)[0] ?? Buffer.alloc(0), 1), 'object');
    assert.equal(text(node, 19), 'metadata');
    const properties = named(bytes(node, 25)[0] ?? Buffer.alloc(0), 1);
    assert.deepEqual([...properties.keys()], ['spec', 'count']);
    assert.equal(text(properties.get('spec') ?? Buffer.alloc(0), 1), '#/definitions/NodeSpec');
    assert.equal(text(bytes(properties.get('count') ?? Buffer.alloc(0), 5)[0] ?? Buffer.alloc(0), 2), '3');
    const gvk = named(node, 31).get('x-kubernetes-group-version-kind') ?? Buffer.alloc(0);
    assert.deepEqual(JSON.parse(text(gvk, 2) ?? ''), [{ group: '', version: 'v1', kind: 'Node' }]);
  });

  void it('keeps every path and definition of the served document', () => {
    const document = openApiV2Document('v1.32.4');
    const encoded = encodeOpenApiV2(document);

    const paths = named(bytes(encoded, 8)[0] ?? Buffer.alloc(0), 2);
    const definitions = named(bytes(encoded, 9)[0] ?? Buffer.alloc(0), 1);
    assert.deepEqual([...paths.keys()], Object.keys(document.paths as object));
    assert.deepEqual([...definitions.keys()], Object.keys(document.definitions as object));
    const security = named(bytes(encoded, 13)[0] ?? Buffer.alloc(0), 1).get('BearerToken');
    const apiKey = bytes(security ?? Buffer.alloc(0), 2)[0] ?? Buffer.alloc(0);
    assert.deepEqual(
      [text(apiKey, 1), text(apiKey, 2), text(apiKey, 3)],
      ['apiKey', 'authorization', 'header'],
    );
  });
});

/**
 * parseListBody gives what JSON.parse of the whole text gives, for lists (items parsed one by one) and
 * for anything else (parsed whole), and throws JSON.parse's SyntaxError on malformed bodies.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseListBody } from '../../../../shared/adapters/kubernetes/list-body.js';

function node(index: number): Record<string, unknown> {
  return {
    metadata: {
      name: `node-${index}`,
      labels: { agentpool: 'pool1', 'odd"key': 'a}b]c{d[' },
      annotations: { note: 'escaped \\" quote, brace } and bracket ] in a string, ünïcödé ✓' },
    },
    spec: { providerID: `azure:///vm/${index}`, taints: [{ key: 'k', effect: 'NoSchedule' }] },
    status: { conditions: [{ type: 'Ready', status: 'True' }], nested: [[{}], []] },
  };
}

const list = {
  kind: 'NodeList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '42', continue: 'token-"items":[' },
  items: [node(0), node(1), node(2)],
};

function same(text: string): void {
  assert.deepEqual(parseListBody(Buffer.from(text, 'utf8')), JSON.parse(text));
}

void describe('parseListBody', () => {
  void it('gives the same list as JSON.parse, item by item, whatever the strings hold', () => {
    same(JSON.stringify(list));
    same(JSON.stringify(list, null, 2));
    same(
      `\r\n\t{ "items" :\n [ ${JSON.stringify(node(7))} ,\n${JSON.stringify(node(8))} ] , "kind": "NodeList" }\n`,
    );
  });

  void it('never parses the whole list as one string: each item, then the rest, on their own', (t) => {
    const body = Buffer.from(
      JSON.stringify({ ...list, items: Array.from({ length: 50 }, (_, i) => node(i)) }),
    );
    const parsed: number[] = [];
    const parse = JSON.parse.bind(JSON);
    t.mock.method(JSON, 'parse', (text: string) => {
      parsed.push(text.length);
      return parse(text) as unknown;
    });
    parseListBody(body);
    t.mock.restoreAll();
    assert.equal(parsed.length, 51);
    assert.ok(
      Math.max(...parsed) < body.length / 10,
      `longest text parsed: ${Math.max(...parsed)} of ${body.length}`,
    );
  });

  void it('keeps the order of the keys around the items', () => {
    const parsed = parseListBody(Buffer.from(JSON.stringify(list))) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), Object.keys(list));
  });

  void it('gives an empty list and a body without items as JSON.parse does', () => {
    same('{"kind":"NodeList","items":[],"metadata":{}}');
    same('{"kind":"Status","status":"Failure","code":410,"reason":"Expired"}');
    same('{"metadata":{"items":[1,2]},"items":[]}');
    same('{"items":null}');
    same('[{"items":[{}]}]');
    same('"text"');
  });

  void it('leaves items that are not objects, and a repeated items key, to JSON.parse', () => {
    same('{"items":[1,"two",null,{"three":3}]}');
    same('{"items":[{"a":1}],"items":[{"b":2}]}');
    same('{"items":[{"a":1}],"metadata":{"note":"\\"items\\""}}');
    // A key that only ends like "items" is another key.
    same('{"\\"items":[{"a":1}],"items":[{"b":2}]}');
  });

  void it("throws JSON.parse's SyntaxError on malformed bodies", () => {
    for (const text of [
      '{"items":[{"a":1},]}',
      '{"items":[,{"a":1}]}',
      '{"items":[{"a":1},,{"b":2}]}',
      '{"items":[{"a":1} {"b":2}]}',
      '{"items":[{"a":1}]',
      '{"items":[{"a":1]}',
      '{"items":[{"a":1}]} trailing',
      '',
    ]) {
      assert.throws(() => parseListBody(Buffer.from(text)), SyntaxError, text);
    }
  });
});

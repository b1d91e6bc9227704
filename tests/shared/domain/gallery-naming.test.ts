// Table tests for gallery and image definition names, validators and the FNV-1a hash.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  fnv1a32Hex,
  galleryNameFor,
  galleryNameProblem,
  imageDefinitionNameFor,
  imageDefinitionNameProblem,
} from '../../../shared/domain/gallery-naming.js';

void describe('fnv1a32Hex', () => {
  // Reference vectors of 32-bit FNV-1a (http://www.isthe.com/chongo/tech/comp/fnv/).
  const cases: readonly (readonly [string, string])[] = [
    ['', '811c9dc5'],
    ['a', 'e40c292c'],
    ['foobar', 'bf9cf968'],
  ];
  for (const [text, hash] of cases)
    void it(`${JSON.stringify(text)} → ${hash}`, () => assert.equal(fnv1a32Hex(text), hash));
  void it('hashes UTF-8 bytes', () => {
    assert.notEqual(fnv1a32Hex('é'), fnv1a32Hex('e'));
    assert.equal(fnv1a32Hex('€'), fnv1a32Hex('\u20ac'));
    assert.match(fnv1a32Hex('😀'), /^[0-9a-f]{8}$/);
  });
});

void describe('galleryNameProblem', () => {
  const cases: readonly (readonly [string, RegExp | undefined])[] = [
    ['vmssp_k8s_prod_1a2b3c4d', undefined],
    ['a', undefined],
    ['Gallery.v2', undefined],
    ['g'.repeat(80), undefined],
    ['', /1–80/],
    ['g'.repeat(81), /1–80/],
    ['k8s-prod', /cannot contain '-'/],
    ['_gallery', /starts and ends/],
    ['gallery.', /starts and ends/],
    ['gal lery', /only letters/],
  ];
  for (const [name, problem] of cases) {
    void it(`${JSON.stringify(name.length > 20 ? `${name.slice(0, 10)}…(${name.length})` : name)}`, () => {
      const found = galleryNameProblem(name);
      if (problem === undefined) assert.equal(found, undefined);
      else assert.match(found ?? '', problem);
    });
  }
});

void describe('imageDefinitionNameProblem', () => {
  const cases: readonly (readonly [string, boolean])[] = [
    ['prod-agents', true],
    ['Prod_agents.v1', true],
    ['d'.repeat(80), true],
    ['d'.repeat(81), false],
    ['-agents', false],
    ['agents-', false],
    ['agents pool', false],
  ];
  for (const [name, ok] of cases) {
    void it(`${name.slice(0, 20)} ${ok ? 'accepted' : 'rejected'}`, () =>
      assert.equal(imageDefinitionNameProblem(name) === undefined, ok));
  }
});

void describe('galleryNameFor', () => {
  const resourceGroups = [
    'k8s-prod',
    'k8s_prod',
    'K8S-PROD-WEU',
    'MC_rg(prod)-weu',
    'grüppe',
    '---',
    '(.)',
    'r'.repeat(90),
    `${'r'.repeat(89)}s`,
    'a.b',
    'a..b',
  ];
  for (const group of resourceGroups) {
    void it(`is valid for ${JSON.stringify(group.length > 20 ? `${group.slice(0, 10)}…` : group)}`, () => {
      const name = galleryNameFor(group);
      assert.equal(galleryNameProblem(name), undefined, name);
      assert.ok(name.startsWith('vmssp_'));
    });
  }
  void it('derives the documented shape', () => {
    assert.equal(galleryNameFor('k8s-prod'), `vmssp_k8s_prod_${fnv1a32Hex('k8s-prod')}`);
  });
  void it('is case-insensitive, like resource group names', () => {
    assert.equal(galleryNameFor('K8S-Prod'), galleryNameFor('k8s-prod'));
  });
  void it('keeps groups that sanitise alike apart', () => {
    const names = resourceGroups.map(galleryNameFor);
    assert.equal(new Set(names).size, names.length);
    assert.notEqual(galleryNameFor('k8s-prod'), galleryNameFor('k8s_prod'));
    assert.notEqual(galleryNameFor('r'.repeat(90)), galleryNameFor(`${'r'.repeat(89)}s`));
  });
  void it('fits 80 characters for the longest group', () => {
    assert.equal(galleryNameFor('r'.repeat(90)).length, 80);
  });
  void it('refuses an empty group', () =>
    assert.throws(() => galleryNameFor(''), /resource group name is empty/));
});

void describe('imageDefinitionNameFor', () => {
  const cases: readonly (readonly [string, string, string | RegExp])[] = [
    ['prod', 'agents', 'prod-agents'],
    ['c'.repeat(40), 'p'.repeat(39), `${'c'.repeat(40)}-${'p'.repeat(39)}`],
    ['c'.repeat(40), 'p'.repeat(40), /^c{40}-p{30}-[0-9a-f]{8}$/],
    ['prod', 'k8s-agents-vmss', 'prod-k8s-agents-vmss'],
    ['prod', 'Agents_VMSS.1', 'prod-agents_vmss.1'],
    ['prod', 'agents pool', /^prod-agents-pool-[0-9a-f]{8}$/],
    ['prod', '-agents', /^prod-agents-[0-9a-f]{8}$/],
  ];
  for (const [cluster, pool, expected] of cases) {
    void it(`${cluster.slice(0, 10)} / ${pool.slice(0, 16)}`, () => {
      const name = imageDefinitionNameFor(cluster, pool);
      if (typeof expected === 'string') assert.equal(name, expected);
      else assert.match(name, expected);
      assert.equal(imageDefinitionNameProblem(name), undefined);
    });
  }
  void it('keeps pools that sanitise alike apart', () => {
    assert.notEqual(imageDefinitionNameFor('prod', 'a b'), imageDefinitionNameFor('prod', 'a--b'));
    assert.notEqual(
      imageDefinitionNameFor('c'.repeat(40), `${'p'.repeat(39)}x`),
      imageDefinitionNameFor('c'.repeat(40), `${'p'.repeat(39)}y`),
    );
  });
  void it('keeps the cluster/pool boundary in the hash', () => {
    assert.notEqual(imageDefinitionNameFor('a-b', 'c d'), imageDefinitionNameFor('a', 'b-c d'));
  });
});

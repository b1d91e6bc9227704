// docs/configuration.md documents every field of the settings schema, and no field it does not have.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { z } from 'zod';

import { Settings } from '../../shared/config/settings.js';
import {
  SECRET_SETTING_PREFIX,
  SETTINGS_KEYS,
  SIMULATOR_SETTINGS_KEYS,
} from '../../shared/config/settings-keys.js';
import { codeRows, readRepoFile, section } from './docs-files.js';

interface JsonSchemaNode {
  readonly properties?: Record<string, JsonSchemaNode>;
  readonly items?: JsonSchemaNode;
  readonly anyOf?: readonly JsonSchemaNode[];
  readonly oneOf?: readonly JsonSchemaNode[];
  readonly allOf?: readonly JsonSchemaNode[];
  readonly $ref?: string;
}

/** Every field path of the schema's input: `clusters[].apiServer.url`, `schedule`, … */
function schemaPaths(): Set<string> {
  const root = z.toJSONSchema(Settings, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode & {
    $defs?: Record<string, JsonSchemaNode>;
  };
  const paths = new Set<string>();
  const walk = (node: JsonSchemaNode | undefined, path: string, depth: number): void => {
    if (node === undefined || depth > 30) return;
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      const childPath = path === '' ? key : `${path}.${key}`;
      paths.add(childPath);
      walk(child, childPath, depth + 1);
    }
    if (node.items !== undefined) walk(node.items, `${path}[]`, depth + 1);
    for (const alternative of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) {
      walk(alternative, path, depth + 1);
    }
    if (node.$ref !== undefined) walk(root.$defs?.[node.$ref.split('/').at(-1) ?? ''], path, depth + 1);
  };
  walk(root, '', 0);
  return paths;
}

const doc = readRepoFile('docs/configuration.md');
const paths = schemaPaths();

void describe('docs/configuration.md', () => {
  void it('the schema walk finds the fields (a sanity check of the walk itself)', () => {
    for (const path of [
      'clusters[].apiServer.auth.entraId.serverAppId',
      'clusters[].pools[].selection.minimumReadyTime',
      'quietPeriod',
    ]) {
      assert.ok(paths.has(path), path);
    }
  });

  void it('documents every app setting, and only those', () => {
    const documented = codeRows(section(doc, 'app-settings'));
    assert.deepEqual(documented, [...SETTINGS_KEYS, `${SECRET_SETTING_PREFIX}<NAME>`]);
    assert.equal(
      Object.keys(Settings.shape).length,
      SETTINGS_KEYS.length + 1,
      'one app setting per top-level field, and `simulator` read from the VMSSP_SIMULATOR* settings',
    );
  });

  void it('documents the simulator seam settings, and only those', () => {
    assert.ok('simulator' in Settings.shape);
    assert.deepEqual(codeRows(section(doc, 'simulator-settings')), [...SIMULATOR_SETTINGS_KEYS]);
  });

  void it('documents every field of a cluster, and no field the schema does not have', () => {
    const clusterFields = [...paths]
      .filter((path) => path.startsWith('clusters[].'))
      .map((path) => path.slice('clusters[].'.length));
    const documented = codeRows(section(doc, 'cluster-fields'));
    const missing = clusterFields.filter((field) => !documented.includes(field));
    const unknown = documented.filter((field) => !clusterFields.includes(field));
    assert.deepEqual({ missing, unknown }, { missing: [], unknown: [] });
    assert.equal(new Set(documented).size, documented.length, 'each field once');
  });
});

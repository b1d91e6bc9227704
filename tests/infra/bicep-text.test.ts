// Tests for the compiler-free Bicep reader the infra tests rely on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  moduleDeclarations,
  objectLiteralKeys,
  outputDeclarations,
  paramDeclarations,
  resourceDeclarations,
  stringLiterals,
  stripComments,
} from './bicep-text.js';

void describe('stripComments', () => {
  const cases: readonly (readonly [string, string, string])[] = [
    ['line comment', 'x = 1 // note\ny = 2', 'x = 1        \ny = 2'],
    ['block comment', 'a /* b\nc */ d', 'a     \n     d'],
    ['slashes inside a string', "u = 'https://x' // c", "u = 'https://x'     "],
    ['escaped quote', "s = 'it\\'s // not' // c", "s = 'it\\'s // not'     "],
    ['interpolated string', "s = '${f('//')}' // c", "s = '${f('//')}'     "],
    ['verbatim string', "s = '''a // b''' // c", "s = '''a // b'''     "],
  ];
  for (const [name, source, expected] of cases) {
    void it(name, () => assert.equal(stripComments(source), expected));
  }
});

void describe('stringLiterals', () => {
  const cases: readonly (readonly [string, string, readonly string[]])[] = [
    ['plain', "a = 'x'\nb = 'y'", ['x', 'y']],
    [
      'interpolation with a nested string',
      "a = 'p-${replace(n, '-', '_')}-s'",
      ["p-${replace(n, '-', '_')}-s"],
    ],
    ['braces in interpolation', "a = '${union({ k: 'v' }, o).k}'", ["${union({ k: 'v' }, o).k}"]],
    ['escaped quote', "a = 'it\\'s'", ["it\\'s"]],
    ['verbatim', "a = '''x\ny'''", ['x\ny']],
    ['not in comments', "// 'no'\na = 'yes'", ['yes']],
  ];
  for (const [name, source, expected] of cases) {
    void it(name, () => assert.deepEqual(stringLiterals(source), expected));
  }
});

void describe('declarations', () => {
  const source = [
    "@description('A.')",
    '@secure()',
    'param token string',
    'param count int = 2',
    "resource a 'Microsoft.Web/sites@2024-04-01' = {",
    "resource b 'Microsoft.Web/sites' existing = {",
    "module m 'modules/x.bicep' = {",
    "output url string = 'https://${a.name}'",
  ].join('\n');

  void it('reads parameters with their decorators and defaults', () => {
    assert.deepEqual(paramDeclarations(source), [
      { name: 'token', type: 'string', hasDefault: false, decorators: ["@description('A.')", '@secure()'] },
      { name: 'count', type: 'int', hasDefault: true, decorators: [] },
    ]);
  });

  void it('reads resources, with and without an api-version', () => {
    assert.deepEqual(
      resourceDeclarations(source).map((r) => [r.symbol, r.type, r.apiVersion, r.existing, r.line]),
      [
        ['a', 'Microsoft.Web/sites', '2024-04-01', false, 5],
        ['b', 'Microsoft.Web/sites', undefined, true, 6],
      ],
    );
  });

  void it('reads modules and outputs', () => {
    assert.deepEqual(moduleDeclarations(source), [{ symbol: 'm', path: 'modules/x.bicep' }]);
    assert.deepEqual(outputDeclarations(source), [
      { name: 'url', type: 'string', expression: "'https://${a.name}'" },
    ]);
  });
});

void describe('objectLiteralKeys', () => {
  const source = [
    'var settings = union(',
    '  {',
    '    // comment: not a key',
    '    A_KEY: value',
    "    'quoted-key': 'x: y'",
    '    nested: {',
    '      inner: 1',
    '    }',
    "    list: [ 'a' ]",
    '  },',
    '  other',
    ')',
  ].join('\n');

  void it('lists the top-level keys only', () => {
    assert.deepEqual(objectLiteralKeys(source, 'var settings = union('), [
      'A_KEY',
      'quoted-key',
      'nested',
      'list',
    ]);
  });

  void it('reports a missing anchor', () => {
    assert.throws(() => objectLiteralKeys(source, 'var missing'), /"var missing" is not in the source/);
  });
});

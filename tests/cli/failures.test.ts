// Expected failures print their message only, with exit 2 for usage and settings; a bug keeps its trace.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { UsageError } from '../../cli/args.js';
import { describeFailure, failureText } from '../../cli/failures.js';
import { loadSettings, SettingsError } from '../../shared/config/settings.js';
import { TerminalError, TransientError } from '../../shared/domain/errors.js';
import { ScenarioError } from '../../sim/world/scenario.js';

function settingsError(): SettingsError {
  try {
    loadSettings({ VMSSP_CLUSTERS: '[]' });
  } catch (error) {
    assert.ok(error instanceof SettingsError);
    return error;
  }
  assert.fail('expected a settings error');
}

void describe('no settings at all', () => {
  void it('hints at --settings and --sim', () => {
    let report;
    try {
      loadSettings({});
    } catch (error) {
      report = describeFailure(error);
    }
    assert.equal(report?.exitCode, 2);
    assert.match(report?.message ?? '', /pass --settings local\.settings\.json/);
    assert.match(report?.message ?? '', /`vmss-prototype status --sim`/);
  });
});

void describe('describeFailure', () => {
  const expected: readonly (readonly [string, unknown, 1 | 2, RegExp])[] = [
    [
      'a usage error, pointing at the command help',
      new UsageError('--pool x: no such pool', 'plan'),
      2,
      /--pool x: no such pool\n\(see vmss-prototype plan --help\)/,
    ],
    [
      'a usage error without a command',
      new UsageError('a command comes first'),
      2,
      /\(see vmss-prototype --help\)$/,
    ],
    ['invalid settings', settingsError(), 2, /^loading settings: 1 problem/],
    [
      'a bad scenario file',
      new ScenarioError('bad.yaml', ['clusters: expected an array']),
      2,
      /^reading scenario bad\.yaml/,
    ],
    [
      'a terminal Azure error',
      new TerminalError('AzureCredentialUnavailable', 'getting an Azure token: run `az login`'),
      1,
      /az login/,
    ],
    [
      'a transient error',
      new TransientError('ClusterUnreachable', 'cannot reach the API server (ECONNREFUSED)'),
      1,
      /ECONNREFUSED/,
    ],
    [
      'a plain error of an expected kind',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      1,
      /ECONNREFUSED/,
    ],
    ['a thrown string', 'boom', 1, /^boom$/],
  ];
  for (const [name, error, code, message] of expected) {
    void it(`${name}: exit ${code}, no stack trace`, () => {
      const report = describeFailure(error);
      assert.equal(report.exitCode, code);
      assert.match(report.message, message);
      assert.equal(report.stack, undefined);
      assert.doesNotMatch(failureText(report), /\n\s+at /);
    });
  }

  void it('an earlier run still recorded as running: says how to resume it', () => {
    const report = describeFailure(
      new Error('starting orchestration refreshPool: instance refresh:prod:agents is already Running'),
    );
    assert.equal(report.exitCode, 1);
    assert.match(report.message, /continue it with `vmss-prototype refresh --resume refresh:prod:agents`/);
    assert.match(
      report.message,
      /or instead, `vmss-prototype release --pool agents` gives back what a dead run of the pool holds .*: at once when that run was a refresh on this machine whose process is gone, otherwise once its lease expired/,
    );
  });

  void it('an earlier cluster run still recorded as running: resume only (release takes a pool)', () => {
    const report = describeFailure(
      new Error('starting orchestration refreshCluster: instance refresh:prod is already Running'),
    );
    assert.match(report.message, /--resume refresh:prod`/);
    assert.doesNotMatch(report.message, /release/);
  });

  void it('a programming error keeps its stack trace, for the bug report', () => {
    const report = describeFailure(new TypeError("Cannot read properties of undefined (reading 'x')"));
    assert.equal(report.exitCode, 1);
    assert.match(report.message, /^unexpected failure \(a bug/);
    assert.match(failureText(report), /\n\s+at /);
  });
});

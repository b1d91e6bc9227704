// Command-line parsing: per-command help, --version, --opt=value, and a usage error for every mistake.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { CliOptions, Command, ParsedArgs } from '../../cli/args.js';
import { helpText, parseArgs, UsageError } from '../../cli/args.js';

function options(argv: readonly string[]): CliOptions {
  const parsed: ParsedArgs = parseArgs(argv);
  assert.equal(parsed.kind, 'run');
  return parsed.options;
}

function usageError(argv: readonly string[]): UsageError {
  try {
    parseArgs(argv);
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail(`expected a usage error for ${argv.join(' ')}`);
}

void describe('parseArgs: help and version', () => {
  const cases: readonly (readonly [string[], ParsedArgs])[] = [
    [[], { kind: 'help' }],
    [['--help'], { kind: 'help' }],
    [['-h'], { kind: 'help' }],
    [['help'], { kind: 'help' }],
    [['help', 'refresh'], { kind: 'help', command: 'refresh' }],
    [['status', '--help'], { kind: 'help', command: 'status' }],
    [['plan', '-h'], { kind: 'help', command: 'plan' }],
    [['refresh', '--pool', 'x', '--help'], { kind: 'help', command: 'refresh' }],
    [['--version'], { kind: 'version' }],
    [['-V'], { kind: 'version' }],
  ];
  for (const [argv, expected] of cases) {
    void it(`${argv.join(' ') || '(nothing)'} → ${expected.kind}${'command' in expected ? ` ${expected.command}` : ''}`, () => {
      assert.deepEqual(parseArgs(argv), expected);
    });
  }
});

void describe('helpText', () => {
  const commands: Command[] = ['status', 'plan', 'refresh', 'doctor'];

  void it('differs per command and names the command in its usage line', () => {
    const texts = commands.map((command) => helpText(command));
    assert.equal(new Set(texts).size, commands.length);
    for (const [index, command] of commands.entries()) {
      assert.match(texts[index] ?? '', new RegExp(`^usage: vmss-prototype ${command}\\b`));
      assert.match(texts[index] ?? '', /exit codes:\n {2}0 {2}done/);
    }
  });

  void it('lists only the options a command accepts', () => {
    assert.doesNotMatch(helpText('status'), /^ +--(pool|node|resume)\b/m);
    assert.doesNotMatch(helpText('plan'), /^ +--(node|resume)\b/m);
    assert.match(helpText('plan'), /--pool <name>/);
    assert.match(helpText('refresh'), /--node <name>[\s\S]*--resume <instance id>/);
  });

  void it("refresh says what gives back a dead run's node, and when", () => {
    const refresh = helpText('refresh').replaceAll(/\s+/g, ' ');
    assert.match(
      refresh,
      /died holding its node .* until `release --pool <name>` gives it back: at once when its process on this machine is gone, otherwise once its lease expired \(within 15 minutes\)/,
    );
    assert.match(refresh, /any later refresh of the pool, or the function app's reaper/);
  });

  void it('refresh says what live capture does to the donor, what it scrubs and when it falls back', () => {
    const refresh = helpText('refresh').replaceAll(/\s+/g, ' ');
    // The old text said the node is always cordoned and drained: false under live capture.
    assert.doesNotMatch(refresh, /The node is cordoned and drained for the capture/);
    assert.match(refresh, /live: the node keeps serving; it is never cordoned, drained or stopped/);
    assert.match(refresh, /freezes its root filesystem \(fsfreeze\)/);
    assert.match(refresh, /at most capture\.live\.maxFreeze, default 10s/);
    assert.match(refresh, /second pod scrubs that copy, never the node \(host name, machine id/);
    assert.match(refresh, /falls back to drain-and-stop otherwise; capture\.mode=live refuses such a pool/);
    assert.match(refresh, /fails mid-way .* does not fall back/);
  });

  void it('release says it takes over a refresh of this machine whose process is gone', () => {
    assert.match(
      helpText('release').replaceAll(/\s+/g, ' '),
      /A refresh of this machine whose process is gone is taken over at once, without --force/,
    );
  });

  void it('retire names its flags, the policy default and where the rules are', () => {
    const retire = helpText('retire');
    assert.match(
      retire,
      /^usage: vmss-prototype retire --pool <name> \[--generation <version>\] \[--dry-run\]/,
    );
    assert.match(retire, /^ +--generation <version> +retire: every node built from this image version/m);
    assert.match(retire, /^ +--dry-run +release, rollback, retire:/m);
    assert.match(retire, /vmss-prototype retire --pool k8s-pool2-12345678-vmss --dry-run --sim/);
    assert.match(retire.replaceAll(/\s+/g, ' '), /runs the pool's scheduled retirement policy now/);
    assert.match(retire, /docs\/retirement\.md/);
    assert.doesNotMatch(retire, /^ +--(to|node|force)\b/m);
    assert.match(helpText(), /^ {2}retire {2}/m);
  });

  void it('the overview lists every command and how to get its help', () => {
    const text = helpText();
    for (const command of commands) assert.match(text, new RegExp(`^ {2}${command} `, 'm'));
    assert.match(text, /vmss-prototype <command> --help/);
    assert.match(text, /--pool=agents/);
  });
});

void describe('parseArgs: options', () => {
  void it('takes values after a space or an "="', () => {
    const spaced = options([
      'refresh',
      '--pool',
      'agents',
      '--node',
      'n1',
      '--cluster',
      'prod',
      '--state-dir',
      'x',
    ]);
    const joined = options(['refresh', '--pool=agents', '--node=n1', '--cluster=prod', '--state-dir=x']);
    assert.deepEqual(joined, spaced);
    assert.deepEqual(joined, {
      command: 'refresh',
      json: false,
      dryRun: false,
      force: false,
      stateDir: 'x',
      cluster: 'prod',
      pool: 'agents',
      node: 'n1',
    });
  });

  void it('keeps an "=" inside the value', () => {
    assert.equal(
      options(['status', '--settings=dir=a/local.settings.json']).settingsFile,
      'dir=a/local.settings.json',
    );
  });

  void it('--sim alone is the sample scenario; --sim <file> and --sim=<file> name one', () => {
    assert.equal(options(['plan', '--sim']).sim, true);
    assert.equal(options(['plan', '--sim', '--json']).sim, true);
    assert.equal(options(['plan', '--sim', 'my.yaml']).sim, 'my.yaml');
    assert.equal(options(['plan', '--sim=my.yaml', '--json']).sim, 'my.yaml');
  });

  void it('retire: `unknown` names the nodes of the original image', () => {
    assert.equal(options(['retire', '--pool=agents', '--generation', 'unknown']).generation, 'unknown');
    assert.throws(
      () => options(['rollback', '--pool=agents', '--to', 'unknown']),
      /--to "unknown" is not a version name/,
    );
  });

  void it('retire: the pool, a generation and a dry run', () => {
    assert.deepEqual(options(['retire', '--pool=agents', '--generation', '2026.1120.31500', '--dry-run']), {
      command: 'retire',
      json: false,
      dryRun: true,
      force: false,
      stateDir: '.runs',
      pool: 'agents',
      generation: '2026.1120.31500',
    });
    // Without --generation: the pool's scheduled policy, now.
    const scheduled = options(['retire', '--pool', 'agents', '--cluster', 'prod', '--json']);
    assert.equal(scheduled.generation, undefined);
    assert.deepEqual([scheduled.command, scheduled.cluster, scheduled.json], ['retire', 'prod', true]);
  });

  void it('reads the rest', () => {
    assert.equal(options(['plan', '--sim', '--capz-rollout', 'allow']).capzRollout, 'allow');
    assert.deepEqual(options(['plan', '--sim', '--time-factor=500', '--json']), {
      command: 'plan',
      json: true,
      dryRun: false,
      force: false,
      stateDir: '.runs',
      sim: true,
      timeFactor: 500,
    });
    assert.equal(options(['refresh', '--resume=refresh:prod:agents']).resume, 'refresh:prod:agents');
    const release = options(['release', '--pool=agents', '--dry-run', '--force']);
    assert.deepEqual(
      [release.command, release.pool, release.dryRun, release.force],
      ['release', 'agents', true, true],
    );
    assert.equal(
      options(['cancel', '--pool', 'agents', '--reason', 'maintenance window']).reason,
      'maintenance window',
    );
    assert.equal(
      options(['status', '--sim-connect', '.sim/connection.json']).simConnect,
      '.sim/connection.json',
    );
  });
});

void describe('parseArgs: usage errors', () => {
  const cases: readonly (readonly [string[], RegExp, Command | undefined])[] = [
    [['frobnicate'], /unknown command "frobnicate": use one of status, plan, refresh/, undefined],
    [['stauts'], /did you mean status\?/, undefined],
    [['--pool', 'x'], /a command comes first/, undefined],
    [['help', 'nope'], /unknown command "nope"/, undefined],
    [['plan', '--pol', 'x'], /unknown option "--pol" for plan \(did you mean --pool\?\)/, 'plan'],
    [['plan', '--node', 'n'], /--node does not apply to plan \(only to refresh\)/, 'plan'],
    [
      ['status', '--pool=x'],
      /--pool does not apply to status \(only to plan, refresh, doctor, release, cancel, rollback, retire\)/,
      'status',
    ],
    [['release'], /release needs --pool/, 'release'],
    [['cancel', '--cluster=prod'], /cancel needs --pool/, 'cancel'],
    [['release', '--pool=a', '--dry-run=yes'], /--dry-run takes no value/, 'release'],
    [
      ['refresh', '--dry-run'],
      /--dry-run does not apply to refresh \(only to release, rollback, retire\)/,
      'refresh',
    ],
    [
      ['cancel', '--pool=a', '--reason', 'x'.repeat(201)],
      /--reason must be at most 200 characters/,
      'cancel',
    ],
    [['plan', '--force'], /--force does not apply to plan \(only to release\)/, 'plan'],
    [['rollback', '--sim'], /rollback needs --pool/, 'rollback'],
    [
      ['rollback', '--pool', 'p', '--to', 'latest'],
      /--to "latest" is not a version name: Major\.Minor\.Patch/,
      'rollback',
    ],
    [['refresh', '--to', '1.2.3'], /--to does not apply to refresh \(only to rollback\)/, 'refresh'],
    [['retire', '--sim'], /retire needs --pool: name the pool/, 'retire'],
    [['retire', '--generation', '2026.1120.31500'], /retire needs --pool/, 'retire'],
    [
      ['retire', '--pool', 'p', '--generation', 'latest'],
      /--generation "latest" is not a version name: Major\.Minor\.Patch as `status` lists it, e\.g\. 2026\.1120\.31500/,
      'retire',
    ],
    [
      ['retire', '--pool', 'p', '--generation=2026.1120'],
      /--generation "2026\.1120" is not a version name/,
      'retire',
    ],
    [
      ['retire', '--pool', 'p', '--generation'],
      /--generation needs a value: --generation <version>/,
      'retire',
    ],
    [
      ['retire', '--pool', 'p', '--to', '1.2.3'],
      /--to does not apply to retire \(only to rollback\)/,
      'retire',
    ],
    [
      ['rollback', '--pool', 'p', '--generation', '1.2.3'],
      /--generation does not apply to rollback \(only to retire\)/,
      'rollback',
    ],
    [['retire', '--pool', 'p', '--force'], /--force does not apply to retire \(only to release\)/, 'retire'],
    [['status', 'extra'], /unexpected argument "extra"/, 'status'],
    [['plan', '--pool'], /--pool needs a value: --pool <name>/, 'plan'],
    [['plan', '--pool='], /--pool needs a value/, 'plan'],
    [['plan', '--pool', '--json'], /--pool needs a value/, 'plan'],
    [['plan', '--json=yes'], /--json takes no value/, 'plan'],
    [['plan', '--sim='], /--sim= needs a scenario file/, 'plan'],
    [['plan', '--pool', 'a', '--pool=b'], /--pool is given twice/, 'plan'],
    [['plan', '--pool', 'a b'], /--pool "a b" is not a valid name/, 'plan'],
    [['refresh', '--node', 'n'], /--node needs --pool/, 'refresh'],
    [['refresh', '--resume', 'r', '--pool', 'p'], /--resume continues a run as it was started/, 'refresh'],
    [['status', '--sim', '--settings', 'f'], /exclude each other/, 'status'],
    [['status', '--time-factor', '5'], /--time-factor only applies with --sim/, 'status'],
    [['status', '--sim', '--time-factor=0'], /must be a number from 1 to 100000/, 'status'],
    [
      ['plan', '--capz-rollout', 'allow'],
      /only applies with --sim or --sim-connect: .*capz\.rollout/,
      'plan',
    ],
    [['plan', '--sim', '--capz-rollout', 'yes'], /--capz-rollout "yes" must be allow or refuse/, 'plan'],
  ];
  for (const [argv, message, command] of cases) {
    void it(argv.join(' '), () => {
      const error = usageError(argv);
      assert.match(error.message, message);
      assert.equal(error.command, command);
    });
  }
});

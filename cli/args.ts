/**
 * Command-line parsing for `vmss-prototype`. Every mistake is reported with the flag, what was wrong
 * and what is accepted, and nothing starts.
 */

export type Command = 'status' | 'plan' | 'refresh';

export interface CliOptions {
  readonly command: Command;
  readonly cluster?: string;
  readonly pool?: string;
  readonly node?: string;
  readonly json: boolean;
  /** Run against an in-process simulator with this scenario (`true`: the sample scenario). */
  readonly sim?: string | true;
  /** Connection file of a simulator running in another process (`npm run sim` writes one). */
  readonly simConnect?: string;
  /** Simulator time factor (simulated seconds per wall second) for --sim. */
  readonly timeFactor?: number;
  /** Settings file in local.settings.json form (`{ "Values": { … } }`); default: the environment. */
  readonly settingsFile?: string;
  /** Where run histories are kept so a killed run can be resumed. */
  readonly stateDir: string;
  /** Resume this instance instead of starting a new one. */
  readonly resume?: string;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const USAGE = `usage: vmss-prototype <command> [options]

commands:
  status                 per pool: image version in use, what built it, how old it is
  plan                   dry run of auto mode: what would be refreshed and why, per node
  refresh                refresh pools: auto mode, one pool (--pool), or from a named node (--pool --node)

options:
  --cluster <name>       cluster from the settings (default: the only configured one)
  --pool <name>          restrict to one pool
  --node <name>          refresh from this node instead of auto selection (needs --pool)
  --json                 machine-readable output on stdout
  --sim [scenario.yaml]  run against an in-process simulator (default: the sample scenario)
  --sim-connect <file>   use a simulator running in another process (its connection.json)
  --time-factor <n>      simulator speed, simulated seconds per wall second (default 200)
  --settings <file>      app settings in local.settings.json form (default: environment)
  --state-dir <dir>      where run histories are kept (default .runs)
  --resume <instanceId>  resume a run that was interrupted (refresh only)
  -h, --help             this text

exit codes: 0 done (refused and skipped pools are decisions, not failures), 1 a run failed, 2 bad usage or settings`;

const COMMANDS: readonly Command[] = ['status', 'plan', 'refresh'];
const VALUE_FLAGS = new Set([
  '--cluster',
  '--pool',
  '--node',
  '--time-factor',
  '--settings',
  '--sim-connect',
  '--state-dir',
  '--resume',
]);
const NAME = /^[A-Za-z0-9]([A-Za-z0-9._:-]{0,251}[A-Za-z0-9])?$/;

export function parseArgs(argv: readonly string[]): CliOptions | 'help' {
  if (argv.includes('-h') || argv.includes('--help')) return 'help';
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError(`a command is required: one of ${COMMANDS.join(', ')}`);
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw new UsageError(`unknown command "${command}": use one of ${COMMANDS.join(', ')}`);
  }
  const values = new Map<string, string>();
  let json = false;
  let sim: string | true | undefined;
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i] ?? '';
    if (flag === '--json') {
      json = true;
      continue;
    }
    if (flag === '--sim') {
      const next = rest[i + 1];
      if (next !== undefined && !next.startsWith('--')) {
        sim = next;
        i++;
      } else {
        sim = true;
      }
      continue;
    }
    if (!VALUE_FLAGS.has(flag)) {
      throw new UsageError(`unknown option "${flag}": see --help for the options of ${command}`);
    }
    const value = rest[i + 1];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${flag} needs a value`);
    if (values.has(flag)) throw new UsageError(`${flag} is given twice: give it once`);
    values.set(flag, value);
    i++;
  }
  for (const flag of ['--cluster', '--pool', '--node', '--resume']) {
    const value = values.get(flag);
    if (value !== undefined && !NAME.test(value)) {
      throw new UsageError(
        `${flag} "${value.slice(0, 80)}" is not a valid name: letters, digits, ".", "_", "-", ":"`,
      );
    }
  }
  if (values.has('--node') && !values.has('--pool')) {
    throw new UsageError('--node needs --pool: name the pool the node belongs to');
  }
  if (values.has('--node') && command !== 'refresh') {
    throw new UsageError(`--node only applies to refresh, not ${command}`);
  }
  if (values.has('--resume') && command !== 'refresh') {
    throw new UsageError(`--resume only applies to refresh, not ${command}`);
  }
  const sources = [values.has('--settings'), sim !== undefined, values.has('--sim-connect')].filter(
    Boolean,
  ).length;
  if (sources > 1) {
    throw new UsageError('--settings, --sim and --sim-connect exclude each other: give one of them');
  }
  let timeFactor: number | undefined;
  const factorText = values.get('--time-factor');
  if (factorText !== undefined) {
    timeFactor = Number(factorText);
    if (!Number.isFinite(timeFactor) || timeFactor < 1 || timeFactor > 100_000) {
      throw new UsageError(`--time-factor "${factorText}" must be a number from 1 to 100000`);
    }
    if (sim === undefined) throw new UsageError('--time-factor only applies with --sim');
  }
  const optional = (flag: string): string | undefined => values.get(flag);
  return {
    command: command as Command,
    json,
    stateDir: values.get('--state-dir') ?? '.runs',
    ...(optional('--cluster') === undefined ? {} : { cluster: optional('--cluster') }),
    ...(optional('--pool') === undefined ? {} : { pool: optional('--pool') }),
    ...(optional('--node') === undefined ? {} : { node: optional('--node') }),
    ...(optional('--settings') === undefined ? {} : { settingsFile: optional('--settings') }),
    ...(optional('--resume') === undefined ? {} : { resume: optional('--resume') }),
    ...(optional('--sim-connect') === undefined ? {} : { simConnect: optional('--sim-connect') }),
    ...(sim === undefined ? {} : { sim }),
    ...(timeFactor === undefined ? {} : { timeFactor }),
  };
}

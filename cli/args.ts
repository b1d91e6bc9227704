/**
 * Command-line parsing for `vmss-prototype`: the commands, their options and help texts. Every mistake is
 * reported with the flag, what was wrong and what is accepted, and nothing starts.
 */
import { didYouMean } from '../shared/config/settings-issues.js';
import { definedOnly } from '../shared/domain/optional.js';

export type Command = 'status' | 'plan' | 'refresh' | 'release' | 'cancel' | 'doctor' | 'rollback' | 'retire';

export interface CliOptions {
  readonly command: Command;
  readonly cluster?: string;
  readonly pool?: string;
  readonly node?: string;
  /** Machine-readable: the result as JSON on stdout, progress as one JSON event per line on stderr. */
  readonly json: boolean;
  /** Run against an in-process simulator with this scenario (`true`: the sample scenario). */
  readonly sim?: string | true;
  /** Connection file of a simulator running in another process (`npm run sim` writes one). */
  readonly simConnect?: string;
  /** Simulator time factor (simulated seconds per wall second) for --sim. */
  readonly timeFactor?: number;
  /** --sim/--sim-connect: the simulated CAPZ clusters' `capz.rollout` (in settings otherwise). */
  readonly capzRollout?: 'allow' | 'refuse';
  /** Settings file in local.settings.json form (`{ "Values": { … } }`); default: the environment. */
  readonly settingsFile?: string;
  /** Where run histories are kept so a killed run can be resumed. */
  readonly stateDir: string;
  /** Resume this instance instead of starting a new one. */
  readonly resume?: string;
  /** release, rollback, retire: show what would be done, change nothing. */
  readonly dryRun: boolean;
  /** release: take the pool over even from a live holder. */
  readonly force: boolean;
  /** cancel: why, shown to whoever looks at the run. */
  readonly reason?: string;
  /** rollback: the version to go back to (default: the previous usable one). */
  readonly to?: string;
  /** retire: every node of this image version (default: the pool's scheduled retirement policy, now). */
  readonly generation?: string;
  /** status: also write the status page (self-contained HTML) to this file. */
  readonly html?: string;
  /** status: serve the status page on 127.0.0.1 at this port (0: any free one) until Ctrl-C. */
  readonly serve?: number;
}

/** What the command line asks for: a run, a help text, or the version. */
export type ParsedArgs =
  | { readonly kind: 'run'; readonly options: CliOptions }
  | { readonly kind: 'help'; readonly command?: Command }
  | { readonly kind: 'version' };

/** A mistake on the command line or in what it points at; exit code 2, nothing started. */
export class UsageError extends Error {
  /** The command whose help the message refers to, when there is one. */
  readonly command: Command | undefined;

  constructor(message: string, command?: Command) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

interface OptionSpec {
  /** `<value>` placeholder, or undefined for a switch. */
  readonly value?: string;
  /** The value may be left out (`--sim` alone: the sample scenario). */
  readonly optionalValue?: boolean;
  readonly help: string;
}

const OPTIONS = {
  '--cluster': { value: '<name>', help: 'cluster from the settings (default: every configured cluster)' },
  '--pool': {
    value: '<name>',
    help: 'one pool (its name in the settings, or the scale set name with "all")',
  },
  '--node': { value: '<name>', help: 'capture this node instead of choosing one (needs --pool)' },
  '--resume': { value: '<instance id>', help: 'continue a run that was interrupted (ids: see --state-dir)' },
  '--to': {
    value: '<version>',
    help: 'rollback: the version to go back to (default: the previous usable one)',
  },
  '--generation': {
    value: '<version>',
    help: "retire: every node built from this image version (default: the pool's retirement policy, now)",
  },
  '--dry-run': { help: 'release, rollback, retire: show what would be done; change nothing' },
  '--force': {
    help: 'take the pool over even from a run whose lease is still live (only when you know it is gone)',
  },
  '--reason': { value: '<text>', help: 'why, recorded on the pool lease for the run and for status' },
  '--json': { help: 'result as JSON on stdout; progress as one JSON object per line on stderr' },
  '--html': { value: '<file>', help: 'status: also write the status page (one self-contained HTML file)' },
  '--serve': {
    value: '<port>',
    help: 'status: serve the status page on 127.0.0.1:<port> (0: any free port), fresh per request, until Ctrl-C',
  },
  '--settings': {
    value: '<file>',
    help: 'app settings in local.settings.json form (default: the environment)',
  },
  '--sim': {
    value: '[scenario.yaml]',
    optionalValue: true,
    help: 'run against an in-process simulator (default: the sample cluster)',
  },
  '--sim-connect': { value: '<file>', help: 'a simulator started with `npm run sim` (its connection.json)' },
  '--time-factor': { value: '<n>', help: 'simulated seconds per wall second with --sim (default 200)' },
  '--capz-rollout': {
    value: '<allow|refuse>',
    help: "with --sim or --sim-connect: accept CAPZ's rollout on simulated CAPZ pools (default refuse; docs/capz.md)",
  },
  '--state-dir': { value: '<dir>', help: 'where run histories are kept for --resume (default .runs)' },
  '-h, --help': { help: 'this text' },
} as const satisfies Record<string, OptionSpec>;

type OptionName = Exclude<keyof typeof OPTIONS, '-h, --help'>;

const COMMON: readonly OptionName[] = [
  '--cluster',
  '--json',
  '--settings',
  '--sim',
  '--sim-connect',
  '--time-factor',
  '--capz-rollout',
  '--state-dir',
];

interface CommandSpec {
  readonly summary: string;
  readonly usage: readonly string[];
  readonly description: string;
  readonly options: readonly OptionName[];
  readonly examples: readonly string[];
}

const COMMANDS: Readonly<Record<Command, CommandSpec>> = {
  status: {
    summary: 'per pool: the image version in use, the node it was built from, its age',
    usage: [
      'vmss-prototype status [--cluster <name>] [--json] [--html <file>] [source]',
      'vmss-prototype status [--cluster <name>] --serve <port> [source]',
    ],
    description:
      'Reads every pool of each cluster and shows the gallery image version its new instances get, which\n' +
      'node it was built from and when, and whether the pool can be refreshed (or why not). Changes nothing.\n' +
      '--html also writes the status page: per pool its versions, runs with their timelines, freshness\n' +
      'over time, canary verdicts, held nodes and node generations, in one HTML file that needs nothing else.\n' +
      '--serve serves that page on 127.0.0.1 only, read afresh for every request, until Ctrl-C.',
    options: [...COMMON, '--html', '--serve'],
    examples: [
      'vmss-prototype status --sim',
      'vmss-prototype status --settings local.settings.json',
      'vmss-prototype status --html status.html --settings local.settings.json',
      'vmss-prototype status --serve 8080 --sim-connect .sim/connection.json',
    ],
  },
  plan: {
    summary: 'dry run of auto mode: what would be refreshed and why, with a verdict per node',
    usage: ['vmss-prototype plan [--cluster <name>] [--pool <name>] [--json] [source]'],
    description:
      'Runs auto mode up to its decision: per pool, the node that would be captured (or why none), how\n' +
      '(CAPTURE: live, drain-and-stop, or drain-and-stop where auto fell back from live, with the reason),\n' +
      "and every node's verdict. Changes nothing in Azure or the cluster.",
    options: ['--pool', ...COMMON],
    examples: [
      'vmss-prototype plan --sim',
      'vmss-prototype plan --pool=agents --settings local.settings.json',
    ],
  },
  refresh: {
    summary: 'refresh pools: auto mode, one pool (--pool), or from a named node (--pool --node)',
    usage: [
      'vmss-prototype refresh [--cluster <name>] [--pool <name> [--node <name>]] [--json] [source]',
      'vmss-prototype refresh --resume <instance id> [source]',
    ],
    description:
      'Captures the chosen node of each pool into a new gallery image version and points the scale set at\n' +
      "it. How the node is captured is the setting capture.mode (`plan` shows each pool's, and why):\n" +
      '  live: the node keeps serving; it is never cordoned, drained or stopped. A short-lived privileged\n' +
      '    pod freezes its root filesystem (fsfreeze) while the running OS disk is snapshotted: writes\n' +
      "    block for a few seconds (at most capture.live.maxFreeze, default 10s; the host's systemd thaws\n" +
      '    it regardless), reads and pods carry on. The snapshot becomes a disk attached to the node; a\n' +
      '    second pod scrubs that copy, never the node (host name, machine id, cloud-init and VM agent\n' +
      "    state, old journals, the bootstrap flavour's identity files); it is detached and becomes the\n" +
      '    image. auto (the default) takes live only where it is known to work (Linux, no customer-key or\n' +
      '    guest disk encryption, not a confidential VM, SCSI data disks, a known bootstrap flavour) and\n' +
      '    falls back to drain-and-stop otherwise; capture.mode=live refuses such a pool instead. A live\n' +
      '    capture that fails mid-way thaws, detaches and deletes its copy and fails: it does not fall back.\n' +
      '  drain-and-stop, run-command: the node is cordoned, drained, prepared, stopped and snapshotted.\n' +
      'Either way the node is given back as it was. Progress goes to stderr; an interrupted run continues\n' +
      'with --resume (histories are kept in --state-dir). A run that\n' +
      'died holding its node (killed, terminal closed) keeps it until `release --pool <name>` gives it back:\n' +
      'at once when its process on this machine is gone, otherwise once its lease expired (within 15\n' +
      "minutes); or until any later refresh of the pool, or the function app's reaper, does.",
    options: ['--pool', '--node', '--resume', ...COMMON],
    examples: [
      'vmss-prototype refresh --sim',
      'vmss-prototype refresh --pool agents --node k8s-agents-31415926-vmss000002 --settings local.settings.json',
      'vmss-prototype refresh --resume refresh:prod-weu:agents --settings local.settings.json',
    ],
  },
  doctor: {
    summary: 'check settings, credentials and the Azure and Kubernetes permissions a run needs',
    usage: ['vmss-prototype doctor [--cluster <name>] [--pool <name>] [--json] [source]'],
    description:
      "Checks, without changing anything: the settings, an Azure token, each cluster's secrets (Key Vault),\n" +
      "the service account's Kubernetes permissions (SelfSubjectAccessReview, or a rules review where the\n" +
      "server has none) and the Azure identity's actions on each pool's resource groups (ARM's permissions\n" +
      'API, against infra/azure/compute-actions.json), for the capture mode configured. Prints what is\n' +
      'missing and the fix. refresh runs the same permission checks before it changes anything.',
    options: ['--pool', ...COMMON],
    examples: ['vmss-prototype doctor --settings local.settings.json', 'vmss-prototype doctor --sim --json'],
  },
  release: {
    summary: "give back what a pool's dead or interrupted run holds (node, VM, prep pod, snapshot, version)",
    usage: [
      'vmss-prototype release --pool <name> [--cluster <name>] [--dry-run] [--force] [--json] [source]',
    ],
    description:
      'Reads the cluster and Azure (no local files needed) and gives back what runs that are no longer alive\n' +
      'left in the pool: the donor node as it was before (uncordoned only if the run cordoned it), its VM\n' +
      'started, the prep pod, the snapshot and unfinished image versions deleted. A run still holding the\n' +
      "pool's lease is left alone (it says who and until when); --force takes the pool over anyway. A\n" +
      'refresh of this machine whose process is gone is taken over at once, without --force (the lease\n' +
      'records its process id). --dry-run shows what would be given back.',
    options: ['--pool', '--dry-run', '--force', ...COMMON],
    examples: [
      'vmss-prototype release --pool agents --dry-run --settings local.settings.json',
      'vmss-prototype release --pool agents --settings local.settings.json',
    ],
  },
  cancel: {
    summary: 'ask the run refreshing a pool to stop and give its node back (any runner, any machine)',
    usage: ['vmss-prototype cancel --pool <name> [--cluster <name>] [--reason <text>] [--json] [source]'],
    description:
      "Writes a cancel request on the pool's lease. The run holding it (the function app or a CLI anywhere)\n" +
      'sees it within about two minutes while it captures the node: it stops, gives the node back and ends\n' +
      'as failed. A run already building its image version finishes. Ctrl-C does the same for a refresh\n' +
      'running in your own terminal.',
    options: ['--pool', '--reason', ...COMMON],
    examples: [
      'vmss-prototype cancel --pool agents --reason "maintenance window closed" --settings local.settings.json',
    ],
  },
  rollback: {
    summary: 'point a pool back at a retained earlier version (one step, no capture)',
    usage: [
      'vmss-prototype rollback --pool <name> [--to <version>] [--dry-run] [--cluster <name>] [--json] [source]',
    ],
    description:
      "Points the pool's scale set back at a retained earlier image version: by default the previous usable\n" +
      'one, or --to a version `status` lists. Newer versions are hidden from `latest` and marked rejected, so\n' +
      'neither new instances nor auto mode bring them back; the change is verified by reading it back. A\n' +
      'version that is gone, not Succeeded or rejected is refused, and so is a pool whose canary is running.\n' +
      'Existing nodes are not touched. --dry-run shows the change and makes none.',
    options: ['--pool', '--to', '--dry-run', ...COMMON],
    examples: [
      'vmss-prototype rollback --pool k8s-pool2-12345678-vmss --dry-run --sim',
      'vmss-prototype rollback --pool agents --to 2026.1120.31500 --settings local.settings.json',
    ],
  },
  retire: {
    summary: 'retire nodes of older image versions: drain and replace them one at a time (surge first)',
    usage: [
      'vmss-prototype retire --pool <name> [--generation <version>] [--dry-run] [--cluster <name>] [--json] [source]',
    ],
    description:
      "Without --generation, runs the pool's scheduled retirement policy now (promotion.retirement: age,\n" +
      'generations kept, budget, windows; refused when it is off). --generation V retires every node built\n' +
      'from V, one at a time, whatever the windows and age rules (the budget and surge still apply); the\n' +
      'version new nodes get is refused (roll back first). Each node: a replacement joins first (surge), the\n' +
      'node is cordoned and drained with evictions (PodDisruptionBudgets decide; nothing is forced), then its\n' +
      'instance is deleted. A drain that does not finish in time gives the node back. Marked nodes\n' +
      '(vmss-prototype.io/do-not-retire, karpenter.sh/do-not-disrupt, ...) are kept. --dry-run lists, node by\n' +
      'node, what would happen and changes nothing. docs/retirement.md has the rules.',
    options: ['--pool', '--generation', '--dry-run', ...COMMON],
    examples: [
      'vmss-prototype retire --pool k8s-pool2-12345678-vmss --dry-run --sim',
      'vmss-prototype retire --pool agents --generation 2026.1120.31500 --dry-run --settings local.settings.json',
      'vmss-prototype retire --pool agents --settings local.settings.json',
    ],
  },
};

const COMMAND_NAMES = Object.keys(COMMANDS) as Command[];

const SOURCES =
  'source: --settings <file> (real Azure, DefaultAzureCredential: `az login` or a managed identity), the\n' +
  'environment when none is given, --sim [scenario.yaml], or --sim-connect <connection.json>.';

export const EXIT_CODES =
  'exit codes:\n' +
  '  0  done (pools that auto mode refused or skipped are decisions, not failures); doctor: all checks passed\n' +
  '  1  a run failed, Azure or the cluster could not be reached, the pool or node you named was\n' +
  '     refused, skipped or is held by another run, a rollback was refused, a retirement was refused,\n' +
  '     busy or gave every node back, release/cancel found a live run or nothing to stop, or a permission\n' +
  '     is missing (doctor, and refresh before it starts)\n' +
  '  2  bad usage or settings: nothing was started\n' +
  '  130  interrupted (Ctrl-C) before the run finished: see the message for --resume or release';

function optionLines(names: readonly (OptionName | '-h, --help')[]): string {
  const rows = names.map((name) => {
    const spec: OptionSpec = OPTIONS[name];
    return [`${name}${spec.value === undefined ? '' : ` ${spec.value}`}`, spec.help] as const;
  });
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return rows.map(([flag, help]) => `  ${flag.padEnd(width)}  ${help}`).join('\n');
}

/** The help text: of one command, or the overview. */
export function helpText(command?: Command): string {
  if (command === undefined) {
    const width = Math.max(...COMMAND_NAMES.map((name) => name.length));
    return [
      'vmss-prototype: keeps the OS image of self-managed Kubernetes node pools on Azure VM Scale Sets fresh',
      '',
      'usage: vmss-prototype <command> [options]',
      '       vmss-prototype <command> --help',
      '       vmss-prototype --version',
      '',
      'commands:',
      ...COMMAND_NAMES.map((name) => `  ${name.padEnd(width)}  ${COMMANDS[name].summary}`),
      '',
      SOURCES,
      'Options take their value as `--pool agents` or `--pool=agents`.',
      'Documentation: docs/README.md in the repository.',
      '',
      EXIT_CODES,
    ].join('\n');
  }
  const spec = COMMANDS[command];
  return [
    `usage: ${spec.usage.join('\n       ')}`,
    '',
    spec.description,
    '',
    'options:',
    optionLines([...spec.options, '-h, --help']),
    '',
    SOURCES,
    '',
    'examples:',
    ...spec.examples.map((example) => `  ${example}`),
    '',
    EXIT_CODES,
  ].join('\n');
}

const NAME = /^[A-Za-z0-9]([A-Za-z0-9._:-]{0,251}[A-Za-z0-9])?$/;
/** A gallery image version name, as `status` lists it. */
const VERSION = /^\d{1,10}\.\d{1,10}\.\d{1,10}$/;

/** Splits `--flag=value` into its parts; anything else is a flag with no inline value. */
function splitInline(argument: string): { flag: string; inline?: string } {
  const equals = argument.indexOf('=');
  if (!argument.startsWith('--') || equals === -1) return { flag: argument };
  return { flag: argument.slice(0, equals), inline: argument.slice(equals + 1) };
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const [first, ...rest] = argv;
  if (first === undefined || first === '-h' || first === '--help') return { kind: 'help' };
  if (first === '--version' || first === '-V') return { kind: 'version' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { kind: 'help' };
    return { kind: 'help', command: commandNamed(topic) };
  }
  const command = commandNamed(first);
  if (rest.includes('-h') || rest.includes('--help')) return { kind: 'help', command };
  const spec = COMMANDS[command];
  const allowed = new Set<string>(spec.options);
  const values = new Map<OptionName, string>();
  let json = false;
  let dryRun = false;
  let force = false;
  let sim: string | true | undefined;
  for (let i = 0; i < rest.length; i++) {
    const argument = rest[i] ?? '';
    const { flag, inline } = splitInline(argument);
    if (!allowed.has(flag)) {
      throw new UsageError(unknownOption(flag, command, spec), command);
    }
    const name = flag as OptionName;
    if (name === '--json' || name === '--dry-run' || name === '--force') {
      if (inline !== undefined) throw new UsageError(`${name} takes no value: give ${name} alone`, command);
      if (name === '--json') json = true;
      else if (name === '--dry-run') dryRun = true;
      else force = true;
      continue;
    }
    if (name === '--sim') {
      if (sim !== undefined) throw new UsageError('--sim is given twice: give it once', command);
      if (inline !== undefined) {
        if (inline === '') throw new UsageError('--sim= needs a scenario file after the "="', command);
        sim = inline;
        continue;
      }
      const next = rest[i + 1];
      if (next !== undefined && !next.startsWith('-')) {
        sim = next;
        i++;
      } else {
        sim = true;
      }
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = rest[i + 1];
      if (next !== undefined && !next.startsWith('--')) {
        value = next;
        i++;
      }
    }
    if (value === undefined || value === '') {
      throw new UsageError(`${name} needs a value: ${name} ${OPTIONS[name].value}`, command);
    }
    if (values.has(name)) throw new UsageError(`${name} is given twice: give it once`, command);
    values.set(name, value);
  }
  for (const flag of ['--cluster', '--pool', '--node', '--resume'] as const) {
    const value = values.get(flag);
    if (value !== undefined && !NAME.test(value)) {
      throw new UsageError(
        `${flag} "${value.slice(0, 80)}" is not a valid name: letters, digits, ".", "_", "-", ":"`,
        command,
      );
    }
  }
  for (const flag of ['--to', '--generation'] as const) {
    const value = values.get(flag);
    // `--generation unknown`: the nodes built from the pool's original image (the generation label's
    // value for an image not ours, domain/generations.ts UNKNOWN_GENERATION).
    if (value === undefined || VERSION.test(value) || (flag === '--generation' && value === 'unknown'))
      continue;
    throw new UsageError(
      `${flag} "${value.slice(0, 80)}" is not a version name: Major.Minor.Patch as \`status\` lists it, e.g. 2026.1120.31500` +
        (flag === '--generation' ? ', or "unknown" for the nodes built from the original image' : ''),
      command,
    );
  }
  const to = values.get('--to');
  const generation = values.get('--generation');
  if (['release', 'cancel', 'rollback', 'retire'].includes(command) && !values.has('--pool')) {
    throw new UsageError(`${command} needs --pool: name the pool (see vmss-prototype status)`, command);
  }
  const reason = values.get('--reason');
  if (
    reason !== undefined &&
    (reason.length > 200 || [...reason].some((char) => char < ' ' || char === '\x7f'))
  ) {
    throw new UsageError('--reason must be at most 200 characters, without control characters', command);
  }
  if (values.has('--node') && !values.has('--pool')) {
    throw new UsageError('--node needs --pool: name the pool the node belongs to', command);
  }
  if (values.has('--resume') && (values.has('--pool') || values.has('--node') || values.has('--cluster'))) {
    throw new UsageError(
      '--resume continues a run as it was started: give it without --cluster, --pool or --node',
      command,
    );
  }
  const sources = [values.has('--settings'), sim !== undefined, values.has('--sim-connect')].filter(
    Boolean,
  ).length;
  if (sources > 1) {
    throw new UsageError('--settings, --sim and --sim-connect exclude each other: give one of them', command);
  }
  let timeFactor: number | undefined;
  const factorText = values.get('--time-factor');
  if (factorText !== undefined) {
    timeFactor = Number(factorText);
    if (!Number.isFinite(timeFactor) || timeFactor < 1 || timeFactor > 100_000) {
      throw new UsageError(`--time-factor "${factorText}" must be a number from 1 to 100000`, command);
    }
    if (sim === undefined) throw new UsageError('--time-factor only applies with --sim', command);
  }
  const capzRolloutText = values.get('--capz-rollout');
  let capzRollout: 'allow' | 'refuse' | undefined;
  if (capzRolloutText !== undefined) {
    if (capzRolloutText !== 'allow' && capzRolloutText !== 'refuse') {
      throw new UsageError(
        `--capz-rollout "${capzRolloutText.slice(0, 40)}" must be allow or refuse (docs/capz.md)`,
        command,
      );
    }
    if (sim === undefined && !values.has('--sim-connect')) {
      throw new UsageError(
        '--capz-rollout only applies with --sim or --sim-connect: against real clusters set capz.rollout in VMSSP_CLUSTERS',
        command,
      );
    }
    capzRollout = capzRolloutText;
  }
  const html = values.get('--html');
  const serveText = values.get('--serve');
  let serve: number | undefined;
  if (serveText !== undefined) {
    serve = Number(serveText);
    if (!/^\d{1,5}$/.test(serveText) || serve > 65_535) {
      throw new UsageError(
        `--serve "${serveText.slice(0, 80)}" is not a port: give a whole number from 1 to 65535 (or 0 for any free port)`,
        command,
      );
    }
    if (html !== undefined) {
      throw new UsageError(
        '--html and --serve exclude each other: write the page to a file (--html) or serve it (--serve)',
        command,
      );
    }
    if (json) {
      throw new UsageError('--json does not apply with --serve: the page is served until Ctrl-C', command);
    }
  }
  const optional = (flag: OptionName): string | undefined => values.get(flag);
  return {
    kind: 'run',
    options: {
      command,
      json,
      dryRun,
      force,
      stateDir: values.get('--state-dir') ?? '.runs',
      ...definedOnly({ reason }),
      ...(optional('--cluster') === undefined ? {} : { cluster: optional('--cluster') }),
      ...(optional('--pool') === undefined ? {} : { pool: optional('--pool') }),
      ...(optional('--node') === undefined ? {} : { node: optional('--node') }),
      ...(optional('--settings') === undefined ? {} : { settingsFile: optional('--settings') }),
      ...(optional('--resume') === undefined ? {} : { resume: optional('--resume') }),
      ...(optional('--sim-connect') === undefined ? {} : { simConnect: optional('--sim-connect') }),
      ...definedOnly({ sim, timeFactor, capzRollout, to, generation, html, serve }),
    },
  };
}

function commandNamed(word: string): Command {
  if ((COMMAND_NAMES as readonly string[]).includes(word)) return word as Command;
  if (word.startsWith('-')) {
    throw new UsageError(`a command comes first: one of ${COMMAND_NAMES.join(', ')} (then ${word})`);
  }
  throw new UsageError(
    `unknown command "${word.slice(0, 80)}"${didYouMean(word, COMMAND_NAMES)}: use one of ${COMMAND_NAMES.join(', ')}`,
  );
}

function unknownOption(flag: string, command: Command, spec: CommandSpec): string {
  const elsewhere = COMMAND_NAMES.filter(
    (other) => other !== command && (COMMANDS[other].options as readonly string[]).includes(flag),
  );
  if (elsewhere.length > 0) {
    return `${flag} does not apply to ${command} (only to ${elsewhere.join(', ')})`;
  }
  if (!flag.startsWith('-')) {
    return `unexpected argument "${flag.slice(0, 80)}": ${command} takes options only (see vmss-prototype ${command} --help)`;
  }
  return `unknown option "${flag.slice(0, 80)}" for ${command}${didYouMean(flag, spec.options)}`;
}

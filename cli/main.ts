/**
 * `vmss-prototype` command line: status, plan and refresh through the local durable runner. Started by
 * cli/vmss-prototype.cjs, which checks the Node.js version before this module and its dependencies load.
 * The result goes to stdout, progress and failures to stderr; exit codes in cli/args.ts (EXIT_CODES).
 */
import { readFileSync } from 'node:fs';

import type { CliOptions } from './args.js';
import { helpText, parseArgs } from './args.js';
import { describeFailure, failureText } from './failures.js';
import type { Session } from './session.js';

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

/** Runs a command. Its modules (the Azure and Kubernetes clients, the runner) load only now: help is instant. */
async function run(options: CliOptions): Promise<number> {
  const [
    { runCommand },
    { exitCodeOf },
    { DEFAULT_WIDTH, render },
    { checkPreconditions },
    progress,
    { openSession },
    { handleInterrupts, INTERRUPTED_EXIT_CODE },
  ] = await Promise.all([
    import('./commands.js'),
    import('./exit-codes.js'),
    import('./output.js'),
    import('./preconditions.js'),
    import('./progress.js'),
    import('./session.js'),
    import('./interrupt.js'),
  ]);
  let session: Session | undefined;
  let interrupts: { interrupted: () => boolean; dispose: () => void } | undefined;
  try {
    session = await openSession({
      stateDir: options.stateDir,
      // Only refresh keeps run histories (for --resume); plan, status, release and cancel leave no files.
      persistRuns: options.command === 'refresh',
      ...(options.settingsFile === undefined ? {} : { settingsFile: options.settingsFile }),
      ...(options.sim === undefined ? {} : { sim: options.sim }),
      ...(options.simConnect === undefined ? {} : { simConnect: options.simConnect }),
      ...(options.timeFactor === undefined ? {} : { timeFactor: options.timeFactor }),
      onStatus: progress.createProgressPrinter(process.stderr, { json: options.json }),
    });
    await checkPreconditions(session, options);
    if (options.command === 'refresh') {
      interrupts = handleInterrupts(
        session.runner,
        options.stateDir,
        (text) => process.stderr.write(text),
        (code) => process.exit(code),
      );
    }
    const result = await runCommand(session, options);
    const width = process.stdout.isTTY ? process.stdout.columns : DEFAULT_WIDTH;
    process.stdout.write(
      options.json ? `${JSON.stringify(result, null, 2)}\n` : `${render(result, { width })}\n`,
    );
    return interrupts?.interrupted() === true ? INTERRUPTED_EXIT_CODE : exitCodeOf(result, options);
  } finally {
    interrupts?.dispose();
    await session?.close();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  try {
    const parsed = parseArgs(argv);
    switch (parsed.kind) {
      case 'help':
        process.stdout.write(`${helpText(parsed.command)}\n`);
        return 0;
      case 'version':
        process.stdout.write(`vmss-prototype ${version()}\n`);
        return 0;
      case 'run':
        return await run(parsed.options);
    }
  } catch (error) {
    const report = describeFailure(error);
    process.stderr.write(failureText(report));
    return report.exitCode;
  }
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
  // A request that never answers (a blackholed endpoint the SDK gave up waiting for) may still hold a
  // socket: exit anyway once the result is out. Unref'd, so a clean exit is not delayed.
  setTimeout(() => process.exit(code), 2_000).unref();
});

/**
 * `vmss-prototype` command line: status, plan and refresh through the local durable runner. Started by
 * cli/vmss-prototype.cjs, which checks the Node.js version before this module and its dependencies load.
 * The result goes to stdout, progress and failures to stderr; exit codes in cli/args.ts (EXIT_CODES).
 */
import { readFileSync } from 'node:fs';

import { definedOnly } from '../shared/domain/optional.js';
import type { CliOptions } from './args.js';
import { helpText, parseArgs } from './args.js';
import { describeFailure, failureText } from './failures.js';
import type { Interrupts } from './interrupt.js';
import type { Session } from './session.js';

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

/** Runs a command. Its modules (the Azure and Kubernetes clients, the runner) load only now: help is instant. */
async function run(options: CliOptions): Promise<number> {
  await import('./zod-jitless.js');
  const [
    { runCommand },
    { exitCodeOf },
    { DEFAULT_WIDTH, render },
    { checkPreconditions },
    progress,
    { openSession },
    { handleInterrupts, INTERRUPTED_EXIT_CODE },
    { readLeftBehind },
    { createRetryPrinter },
    { listenToRetries },
  ] = await Promise.all([
    import('./commands.js'),
    import('./exit-codes.js'),
    import('./output.js'),
    import('./preconditions.js'),
    import('./progress.js'),
    import('./session.js'),
    import('./interrupt.js'),
    import('./left-behind.js'),
    import('./retry-progress.js'),
    import('../functions/orchestrations/retry-notices.js'),
  ]);
  // The status page's module loads only when asked for; a --html target that cannot be written stops here.
  const page =
    options.html !== undefined || options.serve !== undefined ? await import('./status-page.js') : undefined;
  if (options.html !== undefined) page?.checkHtmlTarget(options.html);
  let session: Session | undefined;
  let interrupts: Interrupts | undefined;
  try {
    session = await openSession({
      stateDir: options.stateDir,
      // Only refresh keeps run histories (for --resume); plan, status, release and cancel leave no files.
      persistRuns: options.command === 'refresh',
      ...definedOnly({
        settingsFile: options.settingsFile,
        sim: options.sim,
        simConnect: options.simConnect,
        timeFactor: options.timeFactor,
        capzRollout: options.capzRollout,
      }),
      onStatus: progress.createProgressPrinter(process.stderr, { json: options.json }),
    });
    // A run retrying an API server it cannot reach says so on stderr, once per retry.
    const opened = session;
    listenToRetries(
      createRetryPrinter(
        process.stderr,
        (cluster) => opened.composition.settings.clusters.find((c) => c.name === cluster)?.apiServer.url,
        { json: options.json },
      ),
    );
    await checkPreconditions(session, options);
    if (options.command === 'refresh') {
      const deps = session.composition.dependencies;
      interrupts = handleInterrupts(
        session.runner,
        options.stateDir,
        (text) => process.stderr.write(text),
        (code) => process.exit(code),
        (runs) => readLeftBehind(deps, runs),
      );
    }
    if (page !== undefined && options.serve !== undefined) {
      const open = session;
      const now = (): Date => open.composition.dependencies.now();
      const server = await page.serveStatusPage(
        options.serve,
        async () => {
          const status = await runCommand(open, options);
          if (status.kind !== 'status') throw new Error(`status returned ${status.kind}`);
          return page.statusPageOf(status, now());
        },
        (line) => process.stderr.write(`${line}\n`),
      );
      process.stderr.write(`serving the status page at ${server.url} (Ctrl-C stops)\n`);
      await page.untilInterrupted();
      await server.close();
      process.stderr.write('stopped serving the status page\n');
      return 0;
    }
    const result = await runCommand(session, options);
    if (page !== undefined && options.html !== undefined && result.kind === 'status') {
      const path = await page.writeStatusPage(
        options.html,
        page.statusPageOf(result, session.composition.dependencies.now()),
      );
      process.stderr.write(`wrote the status page to ${path}\n`);
    }
    const width = process.stdout.isTTY ? process.stdout.columns : DEFAULT_WIDTH;
    process.stdout.write(
      options.json ? `${JSON.stringify(result, null, 2)}\n` : `${render(result, { width })}\n`,
    );
    if (interrupts?.interrupted() === true) {
      // After a Ctrl-C: what the runs left, read from the cluster and Azure now that they ended.
      const left = await interrupts.leftBehind();
      if (left !== '') process.stderr.write(`\nafter the interrupt:\n${left}\n`);
      return INTERRUPTED_EXIT_CODE;
    }
    return exitCodeOf(result, options);
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

#!/usr/bin/env node
/** `vmss-prototype` command line: status, plan and refresh through the local durable runner. */
import { SettingsError } from '../shared/config/settings.js';
import { parseArgs, USAGE, UsageError } from './args.js';
import { exitCodeOf, runCommand } from './commands.js';
import { render } from './output.js';
import { createProgressPrinter } from './progress.js';
import { openSession } from './session.js';

async function main(argv: readonly string[]): Promise<number> {
  let options;
  try {
    const parsed = parseArgs(argv);
    if (parsed === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    options = parsed;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`vmss-prototype: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  let session;
  try {
    session = await openSession({
      stateDir: options.stateDir,
      ...(options.settingsFile === undefined ? {} : { settingsFile: options.settingsFile }),
      ...(options.sim === undefined ? {} : { sim: options.sim }),
      ...(options.simConnect === undefined ? {} : { simConnect: options.simConnect }),
      ...(options.timeFactor === undefined ? {} : { timeFactor: options.timeFactor }),
      ...(options.json ? {} : { onStatus: createProgressPrinter(process.stderr) }),
    });
  } catch (error) {
    if (error instanceof UsageError || error instanceof SettingsError) {
      process.stderr.write(`vmss-prototype: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  try {
    const result = await runCommand(session, options);
    process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : `${render(result)}\n`);
    return exitCodeOf(result);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`vmss-prototype: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`vmss-prototype: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await session.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `vmss-prototype: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);

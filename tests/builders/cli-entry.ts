/**
 * The file a test runs the built CLI from: what `vmss-prototype` (cli/vmss-prototype.cjs) runs, the
 * bundle (dist/cli-bundle/, cli/bundle-cli.cjs) when it is current, else the compiled dist/cli/main.js.
 * The same code: the bundle loads a few files instead of ~2 000 modules, which was most of the CPU of
 * each CLI child a test starts (about 2 s of CPU per command against the simulator, 0.6 s bundled).
 * Tests of the compiled modules' own loading (which modules a command resolves) use COMPILED_CLI.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The compiled CLI's entry module. */
export const COMPILED_CLI = join(ROOT, 'dist', 'cli', 'main.js');

const bundler = createRequire(import.meta.url)(join(ROOT, 'cli', 'bundle-cli.cjs')) as {
  cliEntry(root: string): string;
};

/** The CLI's entry as the launcher picks it (the bundle when current). */
export const CLI_ENTRY = bundler.cliEntry(ROOT);

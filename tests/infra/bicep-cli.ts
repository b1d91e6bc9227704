/**
 * Runs the Bicep CLI pinned in infra/tools/bicep-cli.csproj (installed into .ci/.bicep/ by
 * `npm run bicep:install` or .ci/run) and reads its SARIF diagnostics. Never reaches the network.
 */

import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { z } from 'zod';

import { REPO_ROOT } from './repo-files.js';

export const BICEP_PROJECT = 'infra/tools/bicep-cli.csproj';
export const INSTALL_COMMAND = 'npm run bicep:install';

/** The compiler version infra/tools/bicep-cli.csproj pins. */
export function pinnedBicepVersion(root: string = REPO_ROOT): string {
  const project = readFileSync(join(root, BICEP_PROJECT), 'utf8');
  const version = /<BicepVersion>([^<]+)<\/BicepVersion>/.exec(project)?.[1];
  if (version === undefined) throw new Error(`reading ${BICEP_PROJECT}: no <BicepVersion>`);
  return version;
}

/** The NuGet runtime suffix of the Bicep CLI package for this machine, as install-bicep.sh picks it. */
export function bicepRuntime(): string {
  const os = { linux: 'linux', darwin: 'osx' }[process.platform as string];
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch as string];
  if (os === undefined || arch === undefined) {
    throw new Error(`no Bicep CLI package for ${process.platform} ${process.arch}`);
  }
  return `${os}-${arch}`;
}

/** Where install-bicep.sh puts the pinned binary under `root`. */
export function bicepBinaryPath(root: string = REPO_ROOT): string {
  const runtime = bicepRuntime();
  return join(
    root,
    '.ci',
    '.bicep',
    'packages',
    `azure.bicep.commandline.${runtime}`,
    pinnedBicepVersion(root),
    'tools',
    'bicep',
  );
}

/** The pinned binary, or an error saying which command installs it. */
export function bicepBinary(root: string = REPO_ROOT): string {
  const binary = bicepBinaryPath(root);
  if (!existsSync(binary)) {
    throw new Error(
      `the Bicep CLI ${pinnedBicepVersion(root)} is not installed (no ${relative(root, binary)}): ` +
        `run \`${INSTALL_COMMAND}\` once (it needs the .NET SDK and the NuGet registry; CI's .ci/run does it before npm test)`,
    );
  }
  return binary;
}

export interface BicepDiagnostic {
  /** Path relative to the repository root (or the file name outside it). */
  readonly file: string;
  readonly line: number;
  readonly level: 'error' | 'warning' | 'note';
  /** A compiler code (BCP…) or a linter rule name. */
  readonly code: string;
  readonly message: string;
}

export interface BicepRun {
  readonly exitCode: number;
  readonly diagnostics: readonly BicepDiagnostic[];
  readonly stdout: string;
  readonly stderr: string;
}

const Sarif = z.object({
  runs: z.array(
    z.object({
      results: z.array(
        z.object({
          ruleId: z.string(),
          // SARIF's default level is "warning".
          level: z.enum(['error', 'warning', 'note']).default('warning'),
          message: z.object({ text: z.string() }),
          locations: z
            .array(
              z.object({
                physicalLocation: z.object({
                  artifactLocation: z.object({ uri: z.string() }),
                  region: z.object({ startLine: z.number() }).optional(),
                }),
              }),
            )
            .default([]),
        }),
      ),
    }),
  ),
});

/** The diagnostics of one SARIF log, or of several written one after the other (one per file with --pattern). */
function parseSarif(text: string, root: string): BicepDiagnostic[] {
  const start = text.indexOf('{');
  if (start === -1) return [];
  const logs = text
    .slice(start)
    .split(/(?=\{\s*"\$schema")/)
    .map((log) => Sarif.parse(JSON.parse(log)));
  return logs.flatMap((sarif) => sarifDiagnostics(sarif, root));
}

function sarifDiagnostics(sarif: z.infer<typeof Sarif>, root: string): BicepDiagnostic[] {
  return sarif.runs.flatMap((run) =>
    run.results.map((result) => {
      const location = result.locations[0]?.physicalLocation;
      const path = location === undefined ? '' : fileURLToPath(location.artifactLocation.uri);
      const inside = path.startsWith(root);
      return {
        file: inside ? relative(root, path).split('\\').join('/') : basename(path),
        line: location?.region?.startLine ?? 0,
        level: result.level,
        code: result.ruleId,
        message: result.message.text,
      };
    }),
  );
}

/**
 * Runs `bicep <args> --diagnostics-format sarif` in `root` (the repository, or a copy of infra/) and parses
 * the diagnostics.
 */
export async function runBicep(args: readonly string[], options: { root?: string } = {}): Promise<BicepRun> {
  const root = options.root ?? REPO_ROOT;
  const binary = bicepBinary(REPO_ROOT);
  const withFormat = args.includes('--version') ? [...args] : [...args, '--diagnostics-format', 'sarif'];
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      withFormat,
      {
        cwd: root,
        maxBuffer: 64 * 1024 * 1024,
        timeout: 180_000,
      },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') {
          reject(new Error(`running bicep ${args.join(' ')}: ${error.message}`));
          return;
        }
        try {
          // `build` writes its SARIF log to stderr, `lint` to stdout.
          const sarif = [stderr, stdout].filter((text) => text.includes('sarif-2.1.0')).join('');
          const diagnostics = args.includes('--version') ? [] : parseSarif(sarif, root);
          resolve({ exitCode: error === null ? 0 : Number(error.code), diagnostics, stdout, stderr });
        } catch (cause) {
          reject(
            new Error(`reading the diagnostics of bicep ${args.join(' ')}: ${stderr.slice(0, 2000)}`, {
              cause,
            }),
          );
        }
      },
    );
  });
}

/**
 * What makes a build or lint step fail: every error (compiler or linter rule set to "error" in
 * infra/bicepconfig.json), and every compiler (BCP) warning — the compiler reports a property its
 * api-version's schema does not know, or a value of the wrong type, only as a warning. Linter warnings
 * (use-recent-api-versions) do not fail it.
 */
export function failures(run: BicepRun): BicepDiagnostic[] {
  return run.diagnostics.filter(
    (diagnostic) => diagnostic.level === 'error' || /^BCP\d+$/.test(diagnostic.code),
  );
}

/** One line for the test output, e.g. "bicep build infra/main.bicep (Bicep CLI 0.49.2): exit 0, 0 errors, 0 warnings". */
export function summary(step: string, run: BicepRun): string {
  const count = (level: BicepDiagnostic['level']): number =>
    run.diagnostics.filter((diagnostic) => diagnostic.level === level).length;
  return `${step} (Bicep CLI ${pinnedBicepVersion()}): exit ${run.exitCode}, ${count('error')} errors, ${count('warning')} warnings`;
}

export function formatDiagnostics(diagnostics: readonly BicepDiagnostic[]): string {
  return diagnostics.map((d) => `${d.file}:${d.line} ${d.level} ${d.code}: ${d.message}`).join('\n');
}

/** A failing step's exit code and diagnostics, for assertion messages. */
export function describeRun(run: BicepRun): string {
  return `exit ${run.exitCode}\n${formatDiagnostics(run.diagnostics)}`;
}

/** True when the step passed: exit code 0 and nothing in `failures`. */
export function passed(run: BicepRun): boolean {
  return run.exitCode === 0 && failures(run).length === 0;
}

/** Builds `file` (a .bicep or .bicepparam, relative to `root`) into a temporary file and returns its JSON. */
export async function buildToJson(
  file: string,
  options: { root?: string } = {},
): Promise<{ run: BicepRun; json: unknown }> {
  const root = options.root ?? REPO_ROOT;
  const out = await mkdtemp(join(tmpdir(), 'vmssp-bicep-'));
  try {
    const outfile = join(out, 'out.json');
    const command = file.endsWith('.bicepparam') ? 'build-params' : 'build';
    const run = await runBicep([command, join(root, file), '--outfile', outfile], { root });
    const json: unknown = existsSync(outfile) ? JSON.parse(await readFile(outfile, 'utf8')) : undefined;
    return { run, json };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

const builds = new Map<string, Promise<{ run: BicepRun; json: unknown }>>();

/** `buildToJson(file)` in the repository, once per test process. */
export function buildOnce(file: string): Promise<{ run: BicepRun; json: unknown }> {
  let build = builds.get(file);
  if (build === undefined) {
    build = buildToJson(file);
    builds.set(file, build);
  }
  return build;
}

/**
 * infra/main.bicep compiled to an ARM template. Throws, with the diagnostics, when the build fails: the ARM
 * checks only make sense on a template that compiles.
 */
export async function mainTemplate(): Promise<unknown> {
  return passedJson(await buildOnce('infra/main.bicep'), 'infra/main.bicep');
}

/** infra/main.bicepparam compiled to a deployment parameters file. */
export async function mainParameters(): Promise<unknown> {
  return passedJson(await buildOnce('infra/main.bicepparam'), 'infra/main.bicepparam');
}

function passedJson(result: { run: BicepRun; json: unknown }, file: string): unknown {
  if (!passed(result.run) || result.json === undefined) {
    throw new Error(`bicep could not build ${file}:\n${describeRun(result.run)}`);
  }
  return result.json;
}

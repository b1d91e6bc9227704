/**
 * Executes a prep script over the OS disk model, with a small documented command grammar, so that
 * what the script forgets, the clones inherit:
 *
 *   rm -rf|-fr|-r|-f|-Rf PATH…      remove files and directories (globs with `*`)
 *   truncate -s 0|--size=0 FILE…    empty files (created when missing, like truncate)
 *   echo WORDS >> FILE              append a line
 *   sync                            no effect on the model
 *   systemctl poweroff [--force…] [--message=…], poweroff
 *                                   power the host off; nothing after it runs
 *   set -e|-u|-x…                   shell options, no effect
 *
 * Commands are separated by new lines, `;` or `&&`; words may be quoted ('…' or "…", no expansion);
 * `#` starts a comment. Anything else (another command, `|`, `||`, `>`, `$(`, a backquote) stops the
 * script with an error naming the command and the line: the prep pod then fails, as a script would
 * that the simulated host cannot run.
 */
import type { DiskContent } from '../arm/compute-state.js';
import { PATHS, removeTree } from './os-disk.js';
import type { PrepEffect } from './prep-pod.js';

export interface HostScriptRun {
  /** The disk after the script (a new object; the input is not changed). */
  content: DiskContent;
  ok: boolean;
  /** Why the script stopped, naming the command and its line. */
  error?: string;
  poweredOff: boolean;
  /** Files the script removed or emptied. */
  changed: string[];
  effects: PrepEffect[];
}

const SUPPORTED = 'rm -rf, truncate -s 0, echo … >>, sync, systemctl poweroff, set';

interface Command {
  words: string[];
  line: number;
}

class ScriptError extends Error {}

/** Splits the script into commands; quoting as the shell does it, without expansions. */
export function parseHostScript(script: string): Command[] {
  const commands: Command[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let line = 1;
  let commandLine = 1;
  const endWord = (): void => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) commands.push({ words, line: commandLine });
    words = [];
  };
  for (let index = 0; index < script.length; index++) {
    const char = script[index] ?? '';
    if (words.length === 0 && word === undefined) commandLine = line;
    if (char === "'" || char === '"') {
      const end = script.indexOf(char, index + 1);
      if (end < 0) throw new ScriptError(`line ${line}: unterminated quote`);
      const quoted = script.slice(index + 1, end);
      if (char === '"' && /[$`\\]/.test(quoted)) {
        throw new ScriptError(`line ${line}: expansions are not supported (${quoted})`);
      }
      word = (word ?? '') + quoted;
      line += quoted.split('\n').length - 1;
      index = end;
    } else if (char === '#' && word === undefined) {
      const end = script.indexOf('\n', index);
      index = end < 0 ? script.length : end - 1;
    } else if (char === '\n') {
      endCommand();
      line += 1;
    } else if (char === ';') {
      endCommand();
    } else if (char === '&' && script[index + 1] === '&') {
      endCommand();
      index += 1;
    } else if (char === '>' && script[index + 1] === '>') {
      endWord();
      words.push('>>');
      index += 1;
    } else if (char === ' ' || char === '\t') {
      endWord();
    } else if ('|&<>`$()\\'.includes(char)) {
      throw new ScriptError(`line ${line}: '${char}' is not supported (supported: ${SUPPORTED})`);
    } else {
      word = (word ?? '') + char;
    }
  }
  endCommand();
  return commands;
}

function effectsOf(
  changed: readonly string[],
  appended: readonly string[],
  poweredOff: boolean,
): PrepEffect[] {
  const touched = (prefix: string): boolean =>
    changed.some((path) => path === prefix || path.startsWith(`${prefix}/`));
  const effects: PrepEffect[] = [];
  if (appended.some((path) => path.endsWith('ancestry.log'))) effects.push('appends-ancestry');
  if (touched(PATHS.hostname)) effects.push('removes-hostname');
  if (touched(PATHS.machineId)) effects.push('empties-machine-id');
  if (touched('/var/lib/cloud')) effects.push('removes-cloud-init-instance-data');
  if (touched('/var/lib/waagent')) effects.push('removes-waagent-history');
  if (touched(PATHS.journal)) effects.push('removes-old-journals');
  if (poweredOff) effects.push('powers-off');
  return effects;
}

/** Runs the script over a copy of the disk. */
export function runHostScript(script: string, disk: DiskContent): HostScriptRun {
  const content: DiskContent = structuredClone(disk);
  const changed: string[] = [];
  const appended: string[] = [];
  let poweredOff = false;
  const stop = (error: string): HostScriptRun => ({
    content,
    ok: false,
    error,
    poweredOff: false,
    changed,
    effects: effectsOf(changed, appended, false),
  });
  let commands: Command[];
  try {
    commands = parseHostScript(script);
  } catch (error) {
    return stop(`the script cannot run on the simulated host: ${(error as Error).message}`);
  }
  for (const { words, line } of commands) {
    const [command = '', ...args] = words;
    const text = words.join(' ');
    const unsupported = (): HostScriptRun =>
      stop(`line ${line}: '${text}' is not supported by the simulated host (supported: ${SUPPORTED})`);
    if (command === 'set') {
      if (!args.every((arg) => /^[-+][euxo]+$/.test(arg) || arg === 'pipefail')) return unsupported();
    } else if (command === 'sync') {
      if (args.length > 0) return unsupported();
    } else if (command === 'rm') {
      const flags = args.filter((arg) => arg.startsWith('-'));
      const paths = args.filter((arg) => !arg.startsWith('-'));
      if (!flags.every((flag) => /^-[rRf]+$/.test(flag)) || paths.length === 0) return unsupported();
      if (paths.some((path) => !path.startsWith('/')))
        return stop(`line ${line}: '${text}': paths must be absolute`);
      for (const path of paths) changed.push(...removeTree(content, path));
    } else if (command === 'truncate') {
      const size = args[0] === '-s' ? args[1] : /^--size=(.*)$/.exec(args[0] ?? '')?.[1];
      const files = args.slice(args[0] === '-s' ? 2 : 1);
      if (size !== '0' || files.length === 0) return unsupported();
      for (const file of files) {
        content.files[file] = '';
        changed.push(file);
      }
    } else if (command === 'echo') {
      const redirect = args.indexOf('>>');
      const file = args[redirect + 1];
      if (redirect < 0 || file === undefined || redirect !== args.length - 2) return unsupported();
      const existing = content.files[file] ?? '';
      content.files[file] = `${existing}${args.slice(0, redirect).join(' ')}\n`;
      appended.push(file);
    } else if ((command === 'systemctl' && args[0] === 'poweroff') || command === 'poweroff') {
      const options = command === 'systemctl' ? args.slice(1) : args;
      if (
        !options.every((option) => option === '--force' || option === '-f' || option.startsWith('--message='))
      ) {
        return unsupported();
      }
      poweredOff = true;
      break;
    } else {
      return unsupported();
    }
  }
  return { content, ok: true, poweredOff, changed, effects: effectsOf(changed, appended, poweredOff) };
}

/** How a pod runs its script on the host: `nsenter --target 1 --mount … -- sh -c SCRIPT`. */
export interface PodHostScript {
  script: string;
  /** Whether the command enters the host's mount namespace (else nothing it does reaches the disk). */
  entersHostMountNamespace: boolean;
}

/** Reads the host script out of a prep pod container's command and args. */
export function podHostScript(command: readonly string[]): PodHostScript | undefined {
  let words = [...command];
  let entersHostMountNamespace = false;
  if (words[0] === 'nsenter') {
    const separator = words.indexOf('--');
    const options = separator < 0 ? [] : words.slice(1, separator);
    const targetsInit =
      options.some(
        (option, index) => (option === '--target' || option === '-t') && options[index + 1] === '1',
      ) ||
      options.includes('--target=1') ||
      options.some((option) => /^(-m|--mount=)\/proc\/1\/ns\/mnt$/.test(option));
    const mounts = options.some(
      (option) =>
        option === '--mount' || option === '-m' || option.startsWith('-m/') || option.startsWith('--mount='),
    );
    entersHostMountNamespace = targetsInit && mounts;
    words = separator < 0 ? [] : words.slice(separator + 1);
  }
  const shell = words[0] ?? '';
  if (!/^(\/bin\/|\/usr\/bin\/)?(sh|bash)$/.test(shell)) return undefined;
  const flag = words[1] ?? '';
  if (!/^-[exu]*c[exu]*$/.test(flag)) return undefined;
  const script = words[2];
  return script === undefined ? undefined : { script, entersHostMountNamespace };
}

/**
 * What a run-once pod that is not a host script (the canary's check pod, an image-pull pod) prints, as
 * far as the simulator models it, and the termination message the kubelet makes of it. For `sh -c
 * SCRIPT` the log is the lines its `echo` commands print (without `>> FILE`), `$NAME` expanded from the
 * container's environment and from `NAME=…` / `NAME=$(echo …)` assignments, up to the first `exit`;
 * commands the simulator does not model (`test`, `curl`, …) print nothing, and what follows them in an
 * and-or list is not run. Any other command prints nothing.
 *
 * The kubelet's rule (Container.terminationMessagePolicy): `File` (the default) reports only what the
 * container wrote to its termination-message file, which these pods do not; `FallbackToLogsOnError` reports,
 * when that file is empty and the container failed, the end of its log: at most 80 lines or 2048 bytes,
 * whichever is smaller.
 */
import type { Script, SimpleCommand, Word } from './host-script.js';
import { parseHostScript, ScriptSyntaxError } from './host-script.js';

const SHELLS = new Set(['sh', '/bin/sh', 'bash', '/bin/bash']);
const FALLBACK_MAX_LINES = 80;
const FALLBACK_MAX_BYTES = 2048;

/** The lines a one-shot pod's command prints (see the module comment). */
export function oneShotLog(words: readonly string[], env: Readonly<Record<string, string>>): string[] {
  const [shell, flag, script] = words;
  if (shell === undefined || !SHELLS.has(shell) || flag !== '-c' || script === undefined) return [];
  let parsed: Script;
  try {
    parsed = parseHostScript(script);
  } catch (error) {
    if (error instanceof ScriptSyntaxError) return [];
    throw error;
  }
  const vars = new Map(Object.entries(env));
  const lines: string[] = [];
  run(parsed, vars, lines);
  return lines;
}

/** The termination message the kubelet reports for a container that exited with `exitCode`. */
export function terminationMessage(
  policy: unknown,
  exitCode: number,
  log: readonly string[],
): string | undefined {
  if (policy !== 'FallbackToLogsOnError' || exitCode === 0 || log.length === 0) return undefined;
  const tail = log.slice(-FALLBACK_MAX_LINES).join('\n');
  const bytes = Buffer.from(tail);
  return bytes.length <= FALLBACK_MAX_BYTES
    ? tail
    : bytes.subarray(bytes.length - FALLBACK_MAX_BYTES).toString('utf8');
}

type Outcome = 'ok' | 'unknown' | 'exit';

/** Runs the script's modelled commands, appending what they print; false once it reached `exit`. */
function run(script: Script, vars: Map<string, string>, out: string[]): boolean {
  for (const list of script) {
    let outcome = command(list.first, vars, out);
    if (outcome === 'exit') return false;
    for (const { op, command: next } of list.rest) {
      // Only modelled commands succeed; after one the simulator cannot judge, the list stops.
      if (outcome !== 'ok' || op === '||') break;
      outcome = command(next, vars, out);
      if (outcome === 'exit') return false;
    }
  }
  return true;
}

function command(simple: SimpleCommand, vars: Map<string, string>, out: string[]): Outcome {
  const [first, ...rest] = simple.words;
  if (first === undefined) return 'ok';
  const head = first.parts[0];
  const assignment = head?.kind === 'text' ? /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(head.value) : null;
  if (assignment?.[1] !== undefined && head?.kind === 'text' && rest.length === 0) {
    const value: Word = {
      parts: [{ kind: 'text', value: head.value.slice(assignment[0].length) }, ...first.parts.slice(1)],
      source: first.source,
    };
    vars.set(assignment[1], expand(value, vars));
    return 'ok';
  }
  const name = expand(first, vars);
  if (name === 'exit') return 'exit';
  if (name !== 'echo') return 'unknown';
  const args = rest.map((word) => expand(word, vars));
  if (args.includes('>>')) return 'ok';
  out.push(args.join(' '));
  return 'ok';
}

function expand(word: Word, vars: Map<string, string>): string {
  return word.parts
    .map((part) => {
      if (part.kind === 'text') return part.value;
      if (part.kind === 'var') return vars.get(part.name) ?? '';
      const printed: string[] = [];
      run(part.script, new Map(vars), printed);
      return printed.join('\n').replace(/\n+$/, '');
    })
    .join('');
}

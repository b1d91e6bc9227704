/**
 * Runs a host script (grammar: host-script.ts; commands: host-commands.ts) as a process of the simulated
 * host, in segments: a segment runs its commands at once over the host model, and ends at a `sleep N`
 * (the process sleeps N seconds), a `wait` for a background `sleep N &`, or the end of the script. The
 * world decides when each segment runs (a segment that does disk work takes the host's script time).
 *
 * Shell semantics kept: every failing command stops the script (`set -e`; the status of an and-or list
 * is its last command's); `trap 'COMMANDS' EXIT` runs when the script ends (failed too); `trap … TERM`
 * runs when the pod is deleted with a grace period — at once if the script waits (`wait`), only after a
 * foreground `sleep` ends, as sh does; without a TERM trap, TERM ends the script and no trap runs.
 * Variables: `NAME=VALUE`, `NAME=$(COMMAND)` (its output, trailing new lines removed), `$NAME`, `$?`.
 * `echo` without a redirection (and any command's output outside `$(…)`) goes to the script's stdout.
 */
import { messageOf } from '../errors.js';
import {
  type CommandResult,
  type HostEffects,
  type HostModel,
  runHostCommand,
  SUPPORTED_COMMANDS,
  WORK_COMMANDS,
} from './host-commands.js';
import {
  type AndOrList,
  parseHostScript,
  type Script,
  ScriptSyntaxError,
  type SimpleCommand,
  type Word,
} from './host-script.js';

/** What a segment came to. */
export type ShellStep =
  | { readonly kind: 'suspended'; readonly untilMs: number; readonly interruptible: boolean }
  | { readonly kind: 'ended'; readonly ok: boolean; readonly error?: string };

type Signal = 'TERM' | 'INT';

interface ShellState {
  vars: Map<string, string>;
  traps: Map<'EXIT' | Signal, Script>;
  position: number;
  backgroundUntilMs?: number;
  /** A TERM arrived during a foreground sleep: its trap runs when the sleep ends. */
  pendingSignal?: Signal;
  ended: boolean;
  /** `$?`. */
  status: number;
  /** What the script wrote to stdout (echo without a redirection, a command's output outside `$(…)`). */
  stdout: string;
  /** Warnings its commands printed on stderr while succeeding. */
  stderr: string;
}

class ScriptStop extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Thrown out of a segment by `sleep`/`wait`: the process suspends, to resume at the next list. */
class Suspend extends Error {
  constructor(
    readonly untilMs: number,
    readonly interruptible: boolean,
  ) {
    super('suspended');
  }
}

export class HostShell {
  private readonly script: Script;
  private state: ShellState = {
    vars: new Map(),
    traps: new Map(),
    position: 0,
    ended: false,
    status: 0,
    stdout: '',
    stderr: '',
  };

  /** Throws ScriptSyntaxError for what the host cannot run. */
  constructor(text: string) {
    this.script = parseHostScript(text);
  }

  /** Whether the commands up to the next suspension do disk work (the world charges the script time). */
  nextSegmentDoesWork(): boolean {
    for (let index = this.state.position; index < this.script.length; index++) {
      const list = this.script[index];
      if (!list) break;
      const commands = [list.first, ...list.rest.map((entry) => entry.command)];
      if (commands.some((command) => doesWork(command))) return true;
      if (commands.some((command) => suspends(command))) return false;
    }
    return false;
  }

  /** Runs the next segment over `host`. */
  run(host: HostModel, effects: HostEffects, nowMs: number): ShellStep {
    if (this.state.ended) return { kind: 'ended', ok: true };
    if (this.state.pendingSignal !== undefined)
      return this.signal(this.state.pendingSignal, host, effects, nowMs, true);
    try {
      while (this.state.position < this.script.length) {
        const list = this.script[this.state.position];
        this.state.position += 1;
        if (list) this.runList(list, host, effects, nowMs);
      }
    } catch (error) {
      if (error instanceof Suspend) {
        return { kind: 'suspended', untilMs: error.untilMs, interruptible: error.interruptible };
      }
      return this.end(host, effects, nowMs, stopOf(error));
    }
    return this.end(host, effects, nowMs, undefined);
  }

  /**
   * TERM (or INT) from the kubelet. `interruptible`: the script waits (`wait`) or its foreground sleep
   * just ended; otherwise the trap is remembered and runs when the sleep ends (call `run` then).
   */
  signal(
    signal: Signal,
    host: HostModel,
    effects: HostEffects,
    nowMs: number,
    interruptible: boolean,
  ): ShellStep {
    if (this.state.ended) return { kind: 'ended', ok: true };
    const trap = this.state.traps.get(signal);
    if (!trap) {
      this.state.ended = true;
      return { kind: 'ended', ok: false, error: `terminated by SIG${signal}` };
    }
    if (!interruptible) {
      this.state.pendingSignal = signal;
      return { kind: 'suspended', untilMs: nowMs, interruptible: false };
    }
    delete this.state.pendingSignal;
    this.state.traps.delete(signal);
    try {
      for (const list of trap) this.runList(list, host, effects, nowMs);
    } catch (error) {
      if (error instanceof Suspend)
        return this.end(host, effects, nowMs, new ScriptStop(1, 'sleep in a trap is not supported'));
      return this.end(host, effects, nowMs, stopOf(error));
    }
    // A trap that does not exit resumes the script in sh; the scripts here always exit.
    return this.end(host, effects, nowMs, undefined);
  }

  /** SIGKILL: the process is gone; no trap runs. */
  kill(): void {
    this.state.ended = true;
  }

  get ended(): boolean {
    return this.state.ended;
  }

  /** What the script printed on stdout so far. */
  get stdout(): string {
    return this.state.stdout;
  }

  /** The warnings its commands printed on stderr so far (a failing command's message is the step's error). */
  get stderr(): string {
    return this.state.stderr;
  }

  /** The process's state, to roll a segment back (a write to a frozen filesystem blocks it). */
  save(): unknown {
    return structuredClone(this.state);
  }

  restore(saved: unknown): void {
    this.state = structuredClone(saved) as ShellState;
  }

  private end(host: HostModel, effects: HostEffects, nowMs: number, stop: ScriptStop | undefined): ShellStep {
    this.state.ended = true;
    this.state.status = stop?.status ?? 0;
    const exit = this.state.traps.get('EXIT');
    this.state.traps.delete('EXIT');
    let trapError: string | undefined;
    if (exit) {
      try {
        for (const list of exit) this.runList(list, host, effects, nowMs);
      } catch (error) {
        if (!(error instanceof ScriptStop && error.status === 0)) trapError = stopOf(error).message;
      }
    }
    if (stop && stop.status !== 0) return { kind: 'ended', ok: false, error: stop.message };
    if (trapError !== undefined) return { kind: 'ended', ok: false, error: `EXIT trap: ${trapError}` };
    return { kind: 'ended', ok: true };
  }

  private runList(list: AndOrList, host: HostModel, effects: HostEffects, nowMs: number): void {
    let result = this.printed(this.runCommand(list.first, host, effects, nowMs));
    for (const { op, command } of list.rest) {
      if ((op === '&&') === (result.status === 0))
        result = this.printed(this.runCommand(command, host, effects, nowMs));
    }
    this.state.status = result.status;
    if (result.status !== 0) {
      throw new ScriptStop(
        result.status,
        `line ${list.line}: ${result.error ?? `'${describe(list.first)}' failed (exit ${result.status})`}`,
      );
    }
  }

  /** A command's output outside a substitution goes to the script's stdout. */
  private printed(result: CommandResult): CommandResult {
    if (result.output !== undefined) this.state.stdout += result.output;
    if (result.warning !== undefined) this.state.stderr += result.warning;
    return result;
  }

  private runCommand(
    command: SimpleCommand,
    host: HostModel,
    effects: HostEffects,
    nowMs: number,
  ): CommandResult {
    const assignment = this.assignment(command, host, effects, nowMs);
    if (assignment !== undefined) return assignment;
    let words: string[];
    try {
      words = command.words.map((word) => this.expand(word, host, effects, nowMs));
    } catch (error) {
      if (error instanceof ScriptStop && !error.message.startsWith('line ')) {
        throw new ScriptStop(error.status, `line ${command.line}: ${error.message}`);
      }
      throw error;
    }
    const [name = '', ...args] = words;
    const unsupported = (): ScriptStop =>
      new ScriptStop(
        127,
        `line ${command.line}: '${words.join(' ')}' is not supported by the simulated host (supported: ${SUPPORTED_COMMANDS})`,
      );
    if (command.background) {
      if (name !== 'sleep' || args.length !== 1) throw unsupported();
      this.state.backgroundUntilMs = nowMs + seconds(args[0] ?? '', command.line) * 1000;
      return { status: 0 };
    }
    switch (name) {
      case 'sleep':
        if (args.length !== 1) throw unsupported();
        throw new Suspend(nowMs + seconds(args[0] ?? '', command.line) * 1000, false);
      case 'wait': {
        if (args.length > 0) throw unsupported();
        const until = this.state.backgroundUntilMs;
        delete this.state.backgroundUntilMs;
        if (until !== undefined && until > nowMs) throw new Suspend(until, true);
        return { status: 0 };
      }
      case 'exit': {
        const status = Number(args[0] ?? '0');
        if (!Number.isInteger(status)) throw unsupported();
        throw new ScriptStop(status, `line ${command.line}: exit ${status}`);
      }
      case 'trap':
        return this.trap(args, command.line);
      case 'sh':
      case '/bin/sh':
        if (args.length === 1 && args[0] !== undefined && !args[0].startsWith('-')) {
          return runScriptFile(args[0], host, effects, nowMs);
        }
        throw unsupported();
    }
    const result = runHostCommand(words, host, effects);
    if (result === undefined) throw unsupported();
    return result;
  }

  private trap(args: readonly string[], line: number): CommandResult {
    const [body, ...signals] = args;
    if (body === undefined || signals.length === 0)
      throw new ScriptStop(2, `line ${line}: trap needs commands and signals`);
    let parsed: Script;
    try {
      parsed = parseHostScript(body);
    } catch (error) {
      throw new ScriptStop(2, `line ${line}: trap: ${messageOf(error)}`);
    }
    for (const signal of signals) {
      const name = signal.replace(/^SIG/, '');
      if (name !== 'EXIT' && name !== 'TERM' && name !== 'INT' && name !== '0') {
        throw new ScriptStop(2, `line ${line}: trap: signal ${signal} is not supported (EXIT, TERM, INT)`);
      }
      this.state.traps.set(name === '0' ? 'EXIT' : name, parsed);
    }
    return { status: 0 };
  }

  /** `NAME=VALUE` (a command of one word); its status is the substitution's. */
  private assignment(
    command: SimpleCommand,
    host: HostModel,
    effects: HostEffects,
    nowMs: number,
  ): CommandResult | undefined {
    const [word] = command.words;
    if (command.words.length !== 1 || !word) return undefined;
    const first = word.parts[0];
    const match = first?.kind === 'text' ? /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(first.value) : null;
    if (!match?.[1] || !first || first.kind !== 'text') return undefined;
    const rest: Word = {
      parts: [{ kind: 'text', value: first.value.slice(match[0].length) }, ...word.parts.slice(1)],
      source: word.source,
    };
    let status = 0;
    const value = this.expand(rest, host, effects, nowMs, (substitution) => {
      status = substitution;
    });
    this.state.vars.set(match[1], value);
    return {
      status,
      ...(status === 0 ? {} : { error: `${word.source}: the command failed (exit ${status})` }),
    };
  }

  private expand(
    word: Word,
    host: HostModel,
    effects: HostEffects,
    nowMs: number,
    onSubstitution?: (status: number) => void,
  ): string {
    return word.parts
      .map((part) => {
        if (part.kind === 'text') return part.value;
        if (part.kind === 'var') {
          if (part.name === '?') return String(this.state.status);
          const value = this.state.vars.get(part.name);
          if (value === undefined) throw new ScriptStop(1, `${part.name}: parameter not set`);
          return value;
        }
        let output = '';
        let status = 0;
        for (const list of part.script) {
          // Every command of the list writes to the substitution (`$(a || true)` keeps what `a` printed).
          let result = this.captured(list.first, host, effects, nowMs);
          output += result.output ?? '';
          for (const { op, command } of list.rest) {
            if ((op === '&&') === (result.status === 0)) {
              result = this.captured(command, host, effects, nowMs);
              output += result.output ?? '';
            }
          }
          status = result.status;
        }
        onSubstitution?.(status);
        return output.replace(/\n+$/, '');
      })
      .join('');
  }

  private captured(
    command: SimpleCommand,
    host: HostModel,
    effects: HostEffects,
    nowMs: number,
  ): CommandResult {
    const result = this.runCommand(command, host, effects, nowMs);
    return result;
  }
}

/** `sh FILE`: a script file on the host's tmpfs, run to its end by a child shell (no sleeps). */
export function runScriptFile(
  path: string,
  host: HostModel,
  effects: HostEffects,
  nowMs: number,
): CommandResult {
  const text = host.tmpfs[path];
  if (text === undefined) return { status: 127, error: `sh: ${path}: No such file or directory` };
  let child: HostShell;
  try {
    child = new HostShell(text);
  } catch (error) {
    return { status: 2, error: `sh: ${path}: ${messageOf(error)}` };
  }
  const step = child.run(host, effects, nowMs);
  if (step.kind === 'suspended') {
    child.kill();
    return { status: 1, error: `sh: ${path}: sleeping in a script file is not supported` };
  }
  return step.ok ? { status: 0 } : { status: 1, error: `sh ${path}: ${step.error ?? 'failed'}` };
}

function seconds(text: string, line: number): number {
  if (!/^\d+$/.test(text)) throw new ScriptStop(1, `line ${line}: sleep: invalid time interval '${text}'`);
  return Number(text);
}

function commandName(command: SimpleCommand): string {
  const first = command.words[0]?.source ?? '';
  const second = command.words[1]?.source ?? '';
  return first === 'systemctl' ? `${first} ${second}` : first;
}

function doesWork(command: SimpleCommand): boolean {
  if (WORK_COMMANDS.has(commandName(command))) return true;
  return command.words.some((word) =>
    word.parts.some(
      (part) =>
        part.kind === 'subst' &&
        part.script.some((list) => [list.first, ...list.rest.map((entry) => entry.command)].some(doesWork)),
    ),
  );
}

function suspends(command: SimpleCommand): boolean {
  const name = commandName(command);
  return (name === 'sleep' && !command.background) || name === 'wait';
}

function describe(command: SimpleCommand): string {
  return command.words.map((word) => word.source).join(' ');
}

function stopOf(error: unknown): ScriptStop {
  if (error instanceof ScriptStop) return error;
  if (error instanceof ScriptSyntaxError) return new ScriptStop(2, error.message);
  return new ScriptStop(1, messageOf(error));
}

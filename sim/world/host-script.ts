/**
 * The grammar of the scripts the simulated host runs (a prep pod's or a live capture pod's script, or
 * Run Command's): a small, documented subset of the POSIX shell, parsed here and executed by
 * host-shell.ts over the host model (host-commands.ts). What the parser accepts:
 *
 *   commands separated by new lines or `;`, and-or lists with `&&` and `||`, `&` after `sleep N`
 *   (a background sleep, for `wait`), `#` comments;
 *   words quoted '…' (literal) or "…" (only `$NAME` expands), `$NAME` / `${NAME}`, and `$(COMMANDS)`
 *   command substitution in an assignment `NAME=$(…)`; `echo WORDS >> FILE` is the only redirection.
 *
 * Anything else — pipes, other redirections, backquotes, `\`, arithmetic — stops the script with an error
 * naming the line: the pod then fails, as a script would that the simulated host cannot run.
 */

/** A piece of a word: literal text, a variable, or a command substitution. */
export type WordPart =
  | { readonly kind: 'text'; readonly value: string }
  | { readonly kind: 'var'; readonly name: string }
  | { readonly kind: 'subst'; readonly script: Script };

export interface Word {
  readonly parts: readonly WordPart[];
  /** The word as written (for error messages). */
  readonly source: string;
}

export interface SimpleCommand {
  readonly words: readonly Word[];
  readonly line: number;
  /** Ends with `&` (only `sleep N &` is supported). */
  readonly background: boolean;
}

/** `a && b || c`: run `first`, then each next one when the previous status matches its operator. */
export interface AndOrList {
  readonly first: SimpleCommand;
  readonly rest: readonly { readonly op: '&&' | '||'; readonly command: SimpleCommand }[];
  readonly line: number;
}

export type Script = readonly AndOrList[];

export class ScriptSyntaxError extends Error {}

const SUPPORTED_SYNTAX =
  "new lines, ';', '&&', '||', 'sleep N &', quotes, $NAME, NAME=$(…), 'echo … >> FILE', 'printf … > FILE'";

/** Parses a script; throws ScriptSyntaxError naming the line of what it cannot run. */
export function parseHostScript(text: string): Script {
  return new Parser(text).script();
}

class Parser {
  private index = 0;
  private line = 1;

  constructor(private readonly text: string) {}

  script(stopAt?: string): Script {
    const lists: AndOrList[] = [];
    let pending: { op: '&&' | '||' } | undefined;
    let current:
      { first: SimpleCommand; rest: { op: '&&' | '||'; command: SimpleCommand }[]; line: number } | undefined;
    const flush = (): void => {
      if (current) lists.push(current);
      current = undefined;
    };
    for (;;) {
      this.skipBlanks();
      const char = this.peek();
      if (char === undefined || (stopAt !== undefined && char === stopAt)) break;
      if (char === ')') throw this.error("')' without '$('");
      if (char === '\n' || char === ';') {
        if (pending) throw this.error(`'${pending.op}' needs a command after it`);
        this.advance();
        flush();
        continue;
      }
      if (char === '#') {
        while (this.peek() !== undefined && this.peek() !== '\n') this.index += 1;
        continue;
      }
      if (this.startsWith('&&') || this.startsWith('||')) {
        if (!current || pending)
          throw this.error(`'${this.text.slice(this.index, this.index + 2)}' needs a command before it`);
        pending = { op: this.startsWith('&&') ? '&&' : '||' };
        this.index += 2;
        this.skipBlanksAndNewLines();
        continue;
      }
      const command = this.command();
      if (!command) continue;
      if (pending && current) {
        current.rest.push({ op: pending.op, command });
        pending = undefined;
      } else {
        flush();
        current = { first: command, rest: [], line: command.line };
      }
      if (command.background) flush();
    }
    if (pending) throw this.error(`'${pending.op}' needs a command after it`);
    flush();
    return lists;
  }

  private command(): SimpleCommand | undefined {
    const line = this.line;
    const words: Word[] = [];
    let background = false;
    for (;;) {
      this.skipBlanks();
      const char = this.peek();
      if (char === undefined || char === '\n' || char === ';' || char === ')' || char === '#') break;
      if (this.startsWith('&&') || this.startsWith('||')) break;
      if (char === '&') {
        this.index += 1;
        background = true;
        break;
      }
      if (this.startsWith('>>')) {
        this.index += 2;
        words.push({ parts: [{ kind: 'text', value: '>>' }], source: '>>' });
        continue;
      }
      if (char === '>' && !this.startsWith('>&') && !this.startsWith('>|')) {
        this.index += 1;
        words.push({ parts: [{ kind: 'text', value: '>' }], source: '>' });
        continue;
      }
      if ('|<>`\\('.includes(char)) {
        throw this.error(`'${char}' is not supported (supported: ${SUPPORTED_SYNTAX})`);
      }
      words.push(this.word());
    }
    return words.length === 0 ? undefined : { words, line, background };
  }

  private word(): Word {
    const start = this.index;
    const parts: WordPart[] = [];
    const text = (value: string): void => {
      const last = parts.at(-1);
      if (last?.kind === 'text') parts[parts.length - 1] = { kind: 'text', value: last.value + value };
      else parts.push({ kind: 'text', value });
    };
    for (;;) {
      const char = this.peek();
      if (char === undefined || ' \t\n;&|<>)'.includes(char)) break;
      if (char === "'") {
        const end = this.text.indexOf("'", this.index + 1);
        if (end < 0) throw this.error('unterminated quote');
        const quoted = this.text.slice(this.index + 1, end);
        this.line += quoted.split('\n').length - 1;
        text(quoted);
        this.index = end + 1;
      } else if (char === '"') {
        this.index += 1;
        for (;;) {
          const inner = this.peek();
          if (inner === undefined) throw this.error('unterminated quote');
          if (inner === '"') {
            this.index += 1;
            break;
          }
          if (inner === '`' || inner === '\\')
            throw this.error(`'${inner}' in double quotes is not supported`);
          if (inner === '$') {
            parts.push(this.dollar(false));
            continue;
          }
          if (inner === '\n') this.line += 1;
          text(inner);
          this.index += 1;
        }
        // An empty "" is a word of its own.
        if (parts.length === 0) text('');
      } else if (char === '$') {
        parts.push(this.dollar(true));
      } else if ('`\\(|<'.includes(char)) {
        throw this.error(`'${char}' is not supported (supported: ${SUPPORTED_SYNTAX})`);
      } else {
        text(char);
        this.index += 1;
      }
    }
    return { parts, source: this.text.slice(start, this.index) };
  }

  /** `$NAME`, `${NAME}` or (outside double quotes) `$(…)`. */
  private dollar(substitutionAllowed: boolean): WordPart {
    this.index += 1;
    if (this.peek() === '(') {
      if (!substitutionAllowed) throw this.error('$(…) in double quotes is not supported');
      if (this.text[this.index + 1] === '(') throw this.error('arithmetic $((…)) is not supported');
      this.index += 1;
      const script = this.script(')');
      if (this.peek() !== ')') throw this.error('unterminated $(');
      this.index += 1;
      return { kind: 'subst', script };
    }
    // `$?`: the status of the last command (an EXIT trap's is the shell's exit status).
    if (this.peek() === '?') {
      this.index += 1;
      return { kind: 'var', name: '?' };
    }
    const braced = this.peek() === '{';
    if (braced) this.index += 1;
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.index));
    if (!match)
      throw this.error(`'$${this.peek() ?? ''}' is not supported (only $NAME, \${NAME}, $? and $(…))`);
    this.index += match[0].length;
    if (braced) {
      if (this.peek() !== '}') throw this.error('only ${NAME} is supported');
      this.index += 1;
    }
    return { kind: 'var', name: match[0] };
  }

  private skipBlanks(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.index += 1;
  }

  private skipBlanksAndNewLines(): void {
    for (;;) {
      this.skipBlanks();
      if (this.peek() !== '\n') return;
      this.advance();
    }
  }

  private advance(): void {
    if (this.peek() === '\n') this.line += 1;
    this.index += 1;
  }

  private peek(): string | undefined {
    return this.text[this.index];
  }

  private startsWith(token: string): boolean {
    return this.text.startsWith(token, this.index);
  }

  private error(message: string): ScriptSyntaxError {
    return new ScriptSyntaxError(`line ${this.line}: ${message}`);
  }
}

/** How a pod runs its script on the host: `nsenter --target 1 --mount … -- sh -c SCRIPT`. */
export interface PodHostScript {
  script: string;
  /** Whether the command enters the host's mount namespace (else nothing it does reaches the disk). */
  entersHostMountNamespace: boolean;
  /** Whether nsenter forks into the host's PID namespace (`--pid`): then TERM reaches nsenter, not the shell. */
  entersHostPidNamespace: boolean;
}

/** Reads the host script out of a prep pod container's command and args. */
export function podHostScript(command: readonly string[]): PodHostScript | undefined {
  let words = [...command];
  let entersHostMountNamespace = false;
  let entersHostPidNamespace = false;
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
    entersHostPidNamespace = options.some((option) => option === '--pid' || option === '-p');
    words = separator < 0 ? [] : words.slice(separator + 1);
  }
  const shell = words[0] ?? '';
  if (!/^(\/bin\/|\/usr\/bin\/)?(sh|bash)$/.test(shell)) return undefined;
  const flag = words[1] ?? '';
  if (!/^-[exu]*c[exu]*$/.test(flag)) return undefined;
  const script = words[2];
  return script === undefined ? undefined : { script, entersHostMountNamespace, entersHostPidNamespace };
}

/**
 * The subset of Kubernetes JSONPath the simulator evaluates for a CRD's printer columns: fields
 * (`.status.currentVersion`, `['a.b']`), indexes (`[0]`, `[-1]`), wildcards (`[*]`, `.*`) and filters
 * on a field (`[?(@.type=="Ready")]`, `!=`, `<`, `>`, or `[?(@.ready)]` for presence). Recursive
 * descent (`..`), slices and unions are refused at parse time, naming the expression.
 *
 * Upstream: kubernetes/kubernetes `staging/src/k8s.io/client-go/util/jsonpath/` (`parser.go`,
 * `jsonpath.go`); https://kubernetes.io/docs/reference/kubectl/jsonpath/.
 */

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: Step[]; operator?: string; value?: unknown };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function literal(text: string): unknown {
  const trimmed = text.trim();
  if (/^(['"]).*\1$/.test(trimmed)) return trimmed.slice(1, -1);
  if (trimmed === 'true' || trimmed === 'false') return trimmed === 'true';
  const number = Number(trimmed);
  return Number.isNaN(number) ? trimmed : number;
}

function parseFilter(body: string, expression: string): Step {
  const match = /^@((?:\.[\w-]+)+)\s*(?:(==|!=|<=|>=|<|>)\s*(.+))?$/.exec(body.trim());
  if (!match) throw new Error(`parsing JSONPath ${expression}: unsupported filter ${body}`);
  const [, path = '', operator, value] = match;
  return {
    kind: 'filter',
    path: parseSteps(path, expression),
    ...(operator === undefined ? {} : { operator, value: literal(value ?? '') }),
  };
}

function parseSteps(text: string, expression: string): Step[] {
  const steps: Step[] = [];
  let rest = text;
  while (rest !== '') {
    if (rest.startsWith('..'))
      throw new Error(`parsing JSONPath ${expression}: recursive descent is not supported`);
    const field = /^\.((?:[\w/-]|\\.)+|\*)/.exec(rest);
    if (field) {
      const name = field[1] ?? '';
      steps.push(name === '*' ? { kind: 'all' } : { kind: 'field', name: name.replaceAll('\\', '') });
      rest = rest.slice(field[0].length);
      continue;
    }
    if (rest === '.') break;
    const filter = /^\[\?\((.*?)\)\]/.exec(rest);
    if (filter) {
      steps.push(parseFilter(filter[1] ?? '', expression));
      rest = rest.slice(filter[0].length);
      continue;
    }
    const bracket = /^\[([^\]]*)\]/.exec(rest);
    if (!bracket) throw new Error(`parsing JSONPath ${expression}: unexpected ${JSON.stringify(rest)}`);
    const inner = (bracket[1] ?? '').trim();
    if (inner === '*') steps.push({ kind: 'all' });
    else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
    else if (/^(['"]).*\1$/.test(inner)) steps.push({ kind: 'field', name: inner.slice(1, -1) });
    else throw new Error(`parsing JSONPath ${expression}: unsupported [${inner}]`);
    rest = rest.slice(bracket[0].length);
  }
  return steps;
}

/** Parses `.a.b[0]` (or `{.a.b[0]}`); throws naming the expression when it is outside the subset. */
export function parseJsonPath(expression: string): Step[] {
  const inner = expression.trim().replace(/^\{(.*)\}$/s, '$1');
  return parseSteps(inner, expression);
}

/** Scalars compare as the printed text, as the JSONPath filter does; objects never equal. */
function scalarText(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : undefined;
}

function compare(left: unknown, operator: string, right: unknown): boolean {
  if (operator === '==' || operator === '!=') {
    const equal =
      left === right || (scalarText(left) !== undefined && scalarText(left) === scalarText(right));
    return operator === '==' ? equal : !equal;
  }
  const [a, b] = [Number(scalarText(left)), Number(scalarText(right))];
  if (Number.isNaN(a) || Number.isNaN(b)) return false;
  return operator === '<' ? a < b : operator === '>' ? a > b : operator === '<=' ? a <= b : a >= b;
}

function apply(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const value of values) {
    if (step.kind === 'field') {
      if (isObject(value) && step.name in value) out.push(value[step.name]);
    } else if (step.kind === 'index') {
      if (Array.isArray(value)) {
        const found: unknown = value.at(step.index);
        if (found !== undefined) out.push(found);
      }
    } else if (step.kind === 'all') {
      if (Array.isArray(value)) out.push(...(value as unknown[]));
      else if (isObject(value)) out.push(...Object.values(value));
    } else if (Array.isArray(value)) {
      for (const item of value as unknown[]) {
        const found = evaluate(step.path, item);
        if (
          step.operator === undefined
            ? found.length > 0
            : found.some((entry) => compare(entry, step.operator ?? '==', step.value))
        )
          out.push(item);
      }
    }
  }
  return out;
}

function evaluate(steps: readonly Step[], root: unknown): unknown[] {
  return steps.reduce<unknown[]>((values, step) => apply(values, step), [root]);
}

/** Every value the expression selects in `root` (missing keys select nothing, as AllowMissingKeys). */
export function findJsonPath(expression: string, root: unknown): unknown[] {
  return evaluate(parseJsonPath(expression), root);
}

/**
 * `npm run explore`: the fault-space explorer. Runs every point (variant × activity boundary × fault
 * kind) on its own simulated world and prints the table and each violation.
 *
 * usage: npm run explore -- [--variant <name substring>] [--fault <kind>]… [--per-fault <n>] [--json]
 */
import { parseArgs } from 'node:util';

import { explore, reportTable, violationList } from './explore.js';
import type { FaultKind } from './space.js';
import { FAULT_KINDS, VARIANTS } from './space.js';

const { values } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true },
    fault: { type: 'string', multiple: true },
    'per-fault': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

const known = new Set<string>(FAULT_KINDS.map((fault) => fault.kind));
for (const fault of values.fault ?? []) {
  if (!known.has(fault)) {
    process.stderr.write(`--fault ${fault}: not a fault kind; one of ${[...known].join(', ')}\n`);
    process.exit(2);
  }
}
const variants = VARIANTS.filter(
  (variant) => values.variant === undefined || values.variant.some((name) => variant.name.includes(name)),
);
if (variants.length === 0) {
  process.stderr.write(`--variant: none matches; one of ${VARIANTS.map((v) => `"${v.name}"`).join(', ')}\n`);
  process.exit(2);
}
const perFault = values['per-fault'] === undefined ? undefined : Number(values['per-fault']);
if (perFault !== undefined && !(Number.isInteger(perFault) && perFault > 0)) {
  process.stderr.write('--per-fault: a positive whole number of boundaries per variant and fault kind\n');
  process.exit(2);
}

const report = await explore({
  variants,
  ...(values.fault === undefined ? {} : { faults: values.fault as FaultKind[] }),
  ...(perFault === undefined ? {} : { boundariesPerFault: perFault }),
  onPoint: (point, done, total) => {
    const verdict = point.violations.length === 0 ? 'ok' : `${point.violations.length} violation(s)`;
    process.stderr.write(
      `[${done}/${total}] ${point.variant} / ${point.fault} at ${point.boundary}: ${point.runEnd}; ${verdict} (${point.wallMs} ms)\n`,
    );
  },
});
if (values.json) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  const boundaries = Object.entries(report.boundaries)
    .map(([variant, count]) => `${variant}: ${count}`)
    .join(', ');
  process.stdout.write(
    `fault-space explorer: boundaries per run (${boundaries})\n\n${reportTable(report)}\n`,
  );
  const violations = violationList(report);
  if (violations !== '') process.stdout.write(`\nviolations:\n${violations}\n`);
}
process.exitCode = report.points.some((point) => point.violations.length > 0) ? 1 : 0;

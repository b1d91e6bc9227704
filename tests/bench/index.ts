/**
 * Entry point of `npm run bench` (`node --expose-gc dist/tests/bench/index.js [name…]`): runs every
 * registered benchmark, or only those named on the command line. Add new benches to BENCHES.
 */

import { refreshBench } from './refresh.bench.js';
import { selectionBench } from './selection.bench.js';

export interface Bench {
  readonly name: string;
  run(): void | Promise<void>;
}

const BENCHES: readonly Bench[] = [selectionBench, refreshBench];

async function main(names: readonly string[]): Promise<void> {
  const unknown = names.filter((name) => !BENCHES.some((bench) => bench.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `running benchmarks: unknown bench ${unknown.join(', ')} (known: ${BENCHES.map((b) => b.name).join(', ')})`,
    );
  }
  const selected = names.length === 0 ? BENCHES : BENCHES.filter((bench) => names.includes(bench.name));
  for (const bench of selected) {
    const start = performance.now();
    await bench.run();
    console.log(`bench ${bench.name} finished in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

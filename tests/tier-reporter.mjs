// A test reporter for tests/run-tiers.mjs: at the end of one `node --test` process it writes one JSON line,
// the tests counted as the TAP summary counts them (suites apart) and, per file, the time of its top-level
// tests (in the shared fast process several files run one after another).
//
//   node --test --test-reporter=./tests/tier-reporter.mjs --test-reporter-destination=<file.json> …

/** @param {AsyncIterable<{ type: string, data: any }>} source the test runner's events */
export default async function* tierReporter(source) {
  const counts = { tests: 0, passed: 0, failed: 0, skipped: 0, todo: 0, topLevel: 0 };
  /** @type {Record<string, number>} milliseconds per file */
  const files = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const data = event.data;
    if (data.nesting === 0) {
      counts.topLevel += 1;
      if (data.file !== undefined)
        files[data.file] = (files[data.file] ?? 0) + (data.details?.duration_ms ?? 0);
    }
    if (data.details?.type === 'suite') continue;
    counts.tests += 1;
    if (data.skip !== undefined && data.skip !== false) counts.skipped += 1;
    else if (data.todo !== undefined && data.todo !== false) counts.todo += 1;
    else if (event.type === 'test:pass') counts.passed += 1;
    else counts.failed += 1;
  }
  yield `${JSON.stringify({ counts, files })}\n`;
}

// A second test reporter for `npm test`: after the TAP stream ends, it repeats every failed test with
// its file, line and error, so the failure is in the last lines of a long CI log (which is often all
// that is kept) rather than somewhere in 100 000 lines of TAP.
//
//   node --test --test-reporter=tap --test-reporter-destination=stdout \
//        --test-reporter=./tests/failure-summary.mjs --test-reporter-destination=stdout …

/** @param {AsyncIterable<{ type: string, data: any }>} source the test runner's events */
export default async function* failureSummary(source) {
  const failed = [];
  let passed = 0;
  for await (const event of source) {
    if (event.type === 'test:pass' && event.data.details?.type !== 'suite') passed += 1;
    // A suite fails when a test in it fails: report the test, not its suites. A failing `todo` test is
    // expected to fail (node --test does not count it): not a failure.
    const todo = event.data?.todo !== undefined && event.data.todo !== false;
    if (event.type === 'test:fail' && event.data.details?.type !== 'suite' && !todo) failed.push(event.data);
  }
  if (failed.length === 0) {
    yield `# failure summary: no test failed (${passed} passed)\n`;
    return;
  }
  yield `\n# failure summary: ${failed.length} test(s) failed, ${passed} passed\n`;
  for (const test of failed) {
    yield `# ✗ ${test.name}\n#   at ${test.file ?? '?'}:${test.line ?? '?'}\n`;
    const error = test.details?.error;
    const shown = error?.cause instanceof Error ? error.cause : (error?.cause ?? error);
    const text = shown instanceof Error ? (shown.stack ?? shown.message) : String(shown);
    for (const line of text.split('\n').slice(0, 25)) yield `#   ${line}\n`;
  }
}

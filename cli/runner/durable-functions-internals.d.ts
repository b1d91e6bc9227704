// durable-functions ships no types for lib/src; cli/runner/durable-internals.ts types what it uses.
declare module 'durable-functions/lib/src/util/testingUtils.js' {
  const testingUtils: unknown;
  export default testingUtils;
}

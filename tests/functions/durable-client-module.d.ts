// durable-functions ships no types for lib/src; the instance-status test types the one class it uses.
declare module 'durable-functions/lib/src/durableClient/DurableClient.js' {
  const durableClientModule: unknown;
  export default durableClientModule;
}

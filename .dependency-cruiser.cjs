/** Architecture rules: the folder tree is the dependency rule (docs/conventions.md#layout). */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'shared/domain is pure: it imports nothing outside itself, no SDK, no node I/O.',
      severity: 'error',
      from: { path: '^shared/domain/' },
      to: { pathNot: '^shared/domain/' },
    },
    {
      name: 'ports-only-know-domain',
      severity: 'error',
      from: { path: '^shared/ports/' },
      to: { pathNot: '^shared/(domain|ports)/' },
    },
    {
      name: 'application-uses-ports-not-adapters',
      comment: 'use cases depend on the domain and ports; adapters are bound in the composition root.',
      severity: 'error',
      from: { path: '^shared/application/' },
      to: { path: '^(shared/adapters|functions|cli|sim)/' },
    },
    {
      name: 'adapters-do-not-know-use-cases',
      comment: 'adapters implement ports for the application; they never call back into it.',
      severity: 'error',
      from: { path: '^shared/adapters/' },
      to: { path: '^shared/application/' },
    },
    {
      name: 'fakes-only-in-tests',
      comment: 'the in-memory port fakes are test doubles: no product code may run on them.',
      severity: 'error',
      from: { pathNot: '^(tests/|shared/ports/fake/)' },
      to: { path: '^shared/ports/fake/' },
    },
    {
      name: 'triggers-do-not-import-each-other',
      comment: 'each trigger stands alone; what two share lives in a helper module or in shared/.',
      severity: 'error',
      from: { path: '^functions/triggers/[^/]+[.](http|timer|queue|eventgrid)[.]ts$' },
      to: { path: '^functions/triggers/[^/]+[.](http|timer|queue|eventgrid)[.]ts$' },
    },
    {
      name: 'triggers-do-not-touch-activities',
      comment: "triggers start orchestrations and call use cases; the activity table is the durable host's.",
      severity: 'error',
      from: { path: '^functions/triggers/' },
      to: { path: '^(shared/application/activities/|functions/(activities|durable-registry)[.]ts$)' },
    },
    {
      name: 'orchestrations-call-activities-through-handles',
      comment:
        'orchestrators see activities only as typed handles (functions/activities.ts), never their handlers.',
      severity: 'error',
      from: { path: '^functions/orchestrations/' },
      to: { path: '^(shared/application/activities/(?!activity[.]ts$)|functions/durable-registry[.]ts$)' },
    },
    {
      name: 'only-adapters-import-cloud-sdks',
      comment:
        'Only shared/adapters/* import Azure or Kubernetes SDKs. The simulator and tests may use them to drive or emulate the wire.',
      severity: 'error',
      from: { pathNot: '^(shared/adapters/|sim/|tests/)' },
      to: { path: 'node_modules/(@azure/(?!functions/)[^/]+|@kubernetes/[^/]+)/' },
    },
    {
      name: 'opentelemetry-sdk-only-in-adapters',
      comment:
        'Application code records through @opentelemetry/api only; the SDKs and exporters load in shared/adapters/opentelemetry (and tests read metrics back with them).',
      severity: 'error',
      from: { pathNot: '^(shared/adapters/|tests/)' },
      to: { path: 'node_modules/@opentelemetry/(?!api/)[^/]+/' },
    },
    {
      name: 'durable-functions-only-in-shell',
      comment: 'durable-functions is the shell: functions/ registers, cli/ runs orchestrators locally.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: 'node_modules/(durable-functions|@azure/functions)/' },
    },
    {
      name: 'nothing-imports-the-simulator',
      comment: 'the simulator is a test world; product code must not depend on it (cli reaches it by URL).',
      severity: 'error',
      from: { path: '^(shared|functions)/' },
      to: { path: '^sim/' },
    },
    {
      name: 'simulator-does-not-import-the-cli',
      comment:
        'The simulator is a test world below the CLI: the CLI starts it and reads its connection, never the other way (what both need lives in sim/, e.g. sim/app-settings.ts).',
      severity: 'error',
      from: { path: '^sim/' },
      to: { path: '^cli/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};

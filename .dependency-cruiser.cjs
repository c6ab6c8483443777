/**
 * Tock's dependency rules, checked in CI by `npm run depcheck` (dependency-cruiser).
 *
 * - Services talk to each other over gRPC and the bus, never by importing each other's files:
 *   what two services share lives in shared/.
 * - Two services are wiring, not business: services/embedded runs every service in one process
 *   and services/cli opens the data directory for admin commands (it starts the jobs service on
 *   it). They may import another service's entry point (the file that starts it) and nothing
 *   else of it, so a service's internals stay free to change.
 * - The domain modules (the schedule language, the job model, the decider shape, the error table) are pure: no
 *   transport, store, bus or generated code, so deciders and schedule math run and test anywhere.
 * - shared/schedule and shared/job are used through their index.ts only (their own unit tests
 *   under test/unit/schedule and test/unit/job may reach in).
 * - No import cycles.
 */

/** The files that start a service: the only ones the wiring services may import. */
const ENTRY_POINTS = [
  '^services/(executor|gateway|jobs|planner|notifier)/server\\.ts$',
  '^services/logs/logsService\\.ts$',
  // The executor's worker-thread entry (embedded mode runs executors in threads).
  '^services/executor/thread\\.ts$',
];

/** Transports, stores and generated code: what pure domain code must not import. */
const IMPURE = [
  '^shared/(gen|grpc|bus|eventStore|leases|thread)/',
  '^shared/(sqlite|openStore|topology|config|log|runMain)\\.ts$',
  '^services/',
  'node_modules/(@grpc|@bufbuild|@koa|koa|@nats-io|better-sqlite3|@eventstore|undici|nodemailer)/',
];

module.exports = {
  forbidden: [
    {
      name: 'no-cross-service',
      comment: 'A service imports nothing of another service: they talk over gRPC and the bus; shared code goes to shared/.',
      severity: 'error',
      from: { path: '^services/([^/]+)/', pathNot: '^services/(embedded|cli)/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'wiring-imports-entry-points-only',
      comment: 'services/embedded and services/cli start other services through their entry points, never their internals.',
      severity: 'error',
      from: { path: '^services/(embedded|cli)/' },
      to: { path: '^services/', pathNot: ['^services/$1/', ...ENTRY_POINTS] },
    },
    {
      name: 'no-service-from-shared',
      comment: 'shared/ is below the services: it never imports one.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^services/' },
    },
    {
      name: 'pure-domain',
      comment: 'The schedule language, the job model, the notification rules, the decider shape and the error table import no transport, store, bus or generated code.',
      severity: 'error',
      from: { path: ['^shared/(schedule|job|notify)/', '^shared/(errors|decider)\\.ts$'] },
      to: { path: IMPURE, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'schedule-through-its-index',
      comment: 'shared/schedule/index.ts is the schedule module\'s only door.',
      severity: 'error',
      from: { pathNot: ['^shared/schedule/', '^test/unit/schedule/'] },
      to: { path: '^shared/schedule/', pathNot: '^shared/schedule/index\\.ts$' },
    },
    {
      name: 'job-model-through-its-index',
      comment: 'shared/job/index.ts is the job model\'s only door.',
      severity: 'error',
      from: { pathNot: ['^shared/job/', '^test/unit/job/'] },
      to: { path: '^shared/job/', pathNot: '^shared/job/index\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles: each module can be understood (and loaded) before the ones that use it.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to nothing is a typo or a missing dependency.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Generated code is a leaf: imports of it are checked, its own imports are not.
    doNotFollow: { path: ['node_modules', '^shared/gen/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.json'] },
  },
};

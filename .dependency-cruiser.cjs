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
 * - The architecture picture (docs/architecture.md) holds: each rule under "The picture" below
 *   forbids an arrow it does not draw (who may touch the event store, who publishes what on the
 *   bus, who holds the secret key, who calls out).
 * - No import cycles.
 */

/** The files that start a service: the only ones the wiring services may import. */
const ENTRY_POINTS = [
  '^services/(executor|gateway|jobs|planner|notifier|logs)/service\\.ts$',
  // The executor's worker-thread entry (embedded mode runs executors in threads).
  '^services/executor/thread\\.ts$',
];

/** Transports, stores and generated code: what pure domain code must not import. */
/** State and its drivers: the event store, the bus, leases and the databases. */
const STATEFUL = [
  '^shared/(eventStore|bus|leases|crypto|subjects|thread)/',
  '^shared/(openStore|sqlite|postgres|topology)\\.ts$',
  'node_modules/(better-sqlite3|pg|@nats-io|@eventstore)/',
];

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
    // The picture (docs/architecture.md): each rule forbids an arrow the picture does not draw.
    {
      name: 'gateway-holds-no-state',
      comment: 'The gateway owns no state: no event store, bus, leases, database or secret key. It reaches jobs, planner, logs and notifier only by gRPC, so it can be replicated and restarted freely and holds nothing worth stealing.',
      severity: 'error',
      from: { path: '^services/gateway/' },
      to: { path: STATEFUL },
    },
    {
      name: 'gateway-calls-through-grpc-clients',
      comment: 'The gateway speaks gRPC only through the clients of shared/grpc/bridge.ts: one place for deadlines, credentials and the mapping of errors back to AppError.',
      severity: 'error',
      from: { path: '^services/gateway/' },
      to: { path: 'node_modules/@grpc/' },
    },
    {
      name: 'event-store-owners',
      comment: 'Only jobs (job, group and account streams), the planner (it follows the job events and records its watermark) and the notifier (its own streams) use the event store. Executors and logs work from the bus alone, so they scale out and keep running while the store is away.',
      severity: 'error',
      from: { path: '^services/(gateway|executor|logs)/' },
      to: { path: ['^shared/eventStore/', 'node_modules/@eventstore/'] },
    },
    {
      name: 'planner-decides-nothing',
      comment: 'The planner follows the job events and plans; it never runs a command on a stream: a job changes only through the jobs service, whose deciders hold the rules.',
      severity: 'error',
      from: { path: '^services/planner/' },
      to: { path: '^shared/eventStore/handleCommand\\.ts$' },
    },
    {
      name: 'each-service-publishes-its-own-subjects',
      comment: 'Who puts what on the bus, as nats.conf grants it: the planner alone publishes due runs (and their cancel notices), executors alone executions (and their own retries), the notifier alone notifications, the jobs service alone test calls (cron_test). shared/subjects/<service>.ts is imported by that service only.',
      severity: 'error',
      from: { path: '^services/([^/]+)/', pathNot: '^services/(embedded|cli)/' },
      to: { path: '^shared/subjects/', pathNot: '^shared/subjects/$1\\.ts$' },
    },
    {
      name: 'executor-on-the-bus-only',
      comment: 'Executors take due runs from the bus and put executions on it; they call no service and serve none over gRPC, so any number of them can come and go.',
      severity: 'error',
      from: { path: '^services/executor/' },
      to: { path: ['^shared/grpc/', 'node_modules/@grpc/'] },
    },
    {
      name: 'secret-key-holders',
      comment: 'Only jobs (which seals), executors and the notifier (which open) use the key of job and channel secrets; planner, logs and gateway never need it, so they cannot leak it.',
      severity: 'error',
      from: { path: '^services/(gateway|planner|logs)/' },
      to: { path: '^shared/crypto/' },
    },
    {
      name: 'only-executors-and-notifier-call-out',
      comment: 'Only executors (job URLs) and the notifier (email, webhooks, chats) reach the outside world, both through the egress guard: no other service can be made to call into the network.',
      severity: 'error',
      from: { path: '^services/', pathNot: '^services/(executor|notifier)/' },
      to: { path: ['^shared/egressGuard\\.ts$', 'node_modules/(undici|nodemailer)/'] },
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

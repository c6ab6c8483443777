// `npm test`: every tier (unit, contract, integration, e2e, fault) in one parallel pool. The files
// that take longest start first, so the pool does not end waiting on one long file while the other
// workers sit idle; the rest follow tier by tier. Most e2e and fault files spend their time waiting
// on real timers, processes and sockets, not on the CPU: hence more workers than cores.
const { readdirSync } = require('node:fs');
const { join } = require('node:path');

const TIERS = ['unit', 'contract', 'integration', 'e2e', 'fault'];

/** The longest files, longest first (timed in a whole run: `TOCK_TEST_TIMES=/tmp/times npm test`, then `sort -rn /tmp/times`). */
const LONGEST_FIRST = [
  'test/fault/exactlyOnce.test.ts',
  'test/e2e/api/cliOwner.test.ts',
  'test/e2e/api/cliChannels.test.ts',
  'test/e2e/dashboardLayout.test.ts',
  'test/e2e/slice.test.ts',
  'test/e2e/api/cli.test.ts',
  'test/e2e/dashboardAreas.test.ts',
  'test/e2e/npmStart.test.ts',
  'test/e2e/distributed.test.ts',
  'test/e2e/schemaVersions.test.ts',
  'test/fault/selfHealing.test.ts',
  'test/e2e/api/actionLinks.test.ts',
  'test/e2e/distributedActionLinks.test.ts',
  'test/e2e/secretsAtRest.test.ts',
  'test/fault/restoreDrill.test.ts',
  'test/e2e/logSurvival.test.ts',
  'test/contract/eventStore.test.ts',
  'test/e2e/grpcAuth.test.ts',
  'test/e2e/dashboardBulk.test.ts',
  'test/fault/postgresRestart.test.ts',
  'test/e2e/dashboardRateLimit.test.ts',
  'test/contract/logsView.test.ts',
  'test/e2e/api/badge.test.ts',
  'test/unit/deployKubelet.test.ts',
  'test/e2e/dashboardAccount.test.ts',
];

const testFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .sort();

const rest = TIERS.flatMap((tier) => testFiles(join('test', tier))).filter((f) => !LONGEST_FIRST.includes(f));

module.exports = {
  parallel: true,
  jobs: Number(process.env.TOCK_TEST_JOBS ?? 4),
  spec: [...LONGEST_FIRST, ...rest],
};

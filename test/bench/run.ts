// `npm run bench`: every benchmark in turn, each in its own process so one's heap and timers do
// not disturb the next. Each prints its figures next to this machine's raw limit, measured in
// the same run. Pass names to run a subset: npm run bench -- dispatch throughput
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FINDING_EXIT } from './bound.ts';

const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)));
let failed = 0;
const findings: string[] = [];
for (const file of benches) {
  console.log(`\n=== ${file}`);
  const result = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=64', '--import', 'tsx', join(dir, file)], { stdio: 'inherit', cwd: join(dir, '../..') });
  if (result.status === FINDING_EXIT) findings.push(file);
  else if (result.status !== 0) {
    failed++;
    console.log(`=== ${file} exited with ${result.status}`);
  }
}
if (findings.length > 0) console.log(`\n=== findings (a bound not met, see FINDING above): ${findings.join(', ')}`);
process.exit(failed || findings.length > 0 ? 1 : 0);

/**
 * Live subscriptions following appends (the jobs view, the planner's two and the notifier's view
 * follow every append in embedded mode): the CPU per appended event with four followers on the
 * store object that appends, which hands them its appended rows from memory
 * (shared/eventStore/appendedTail.ts), next to four followers on another store object of the same
 * file, which read each row back from SQLite, measured in the same run. Each round appends a batch
 * of job-sized events and waits until every follower has it.
 *
 * Run: npm run bench -- followers   (FOLLOW_BATCHES, default 200, of FOLLOW_BATCH = 500 events)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { openSqliteEventStore } from '../../shared/eventStore/sqliteEventStore.ts';

const BATCHES = Number(process.env.FOLLOW_BATCHES ?? 200);
const BATCH = Number(process.env.FOLLOW_BATCH ?? 500);
// About the size of a JobCreated event's data.
const settings = { name: 'nightly report', expression: '0 3 * * *', url: 'https://example.com/hooks/report?x=1', timeout: 30, notify: true, httpHeaders: '', postData: '', note: 'x'.repeat(600) };

/** CPU µs per appended event while `followers` (subscriptions on `readFrom`) keep up with appends to `writer`. */
async function follow(writer: EventStore, readFrom: EventStore, round: number): Promise<number> {
  let last = 0n;
  const seen = [0, 0, 0, 0];
  const followers = [undefined, undefined, 'cronjob', 'account'].map((category, i) =>
    readFrom.subscribe({ category, fromPosition: undefined }, (e) => {
      seen[i]!++;
      last = e.position > last ? e.position : last;
    }),
  );
  await Promise.all(followers.map((f) => f.caughtUp));
  const before = seen.slice();
  const cpu0 = process.cpuUsage();
  for (let b = 0; b < BATCHES; b++) {
    const appends = Array.from({ length: BATCH }, (_, i) => ({ stream: `cronjob-${round}${b * BATCH + i}`, events: [{ type: 'JobCreated', data: { id: b * BATCH + i, settings } }] }));
    const results = await writer.appendMany(appends);
    const target = results[results.length - 1]!.position;
    while (seen[0]! - before[0]! < (b + 1) * BATCH || seen[2]! - before[2]! < (b + 1) * BATCH || last < target) await new Promise((r) => setImmediate(r));
  }
  const cpu = process.cpuUsage(cpu0);
  await Promise.all(followers.map((f) => f.close()));
  return (cpu.user + cpu.system) / (BATCHES * BATCH);
}

const dir = mkdtempSync(join(tmpdir(), 'tock-follow-'));
try {
  const file = join(dir, 'events.db');
  const writer = openSqliteEventStore(file);
  const other = openSqliteEventStore(file);
  console.log(`four live subscriptions following ${BATCHES} appends of ${BATCH} job-sized events (CPU of this process per event):`);
  // Alternated, twice each, so that a drift of the machine's speed shows as spread, not as a difference.
  for (const round of [1, 2]) {
    const fromFile = await follow(writer, other, round * 10);
    const fromMemory = await follow(writer, writer, round * 10 + 1);
    console.log(`  round ${round}: followers on the appending store object ${fromMemory.toFixed(1)} µs/event, on another store object (read back from SQLite) ${fromFile.toFixed(1)} µs/event`);
  }
  await other.close();
  await writer.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

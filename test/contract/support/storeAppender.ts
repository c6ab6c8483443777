/**
 * Child process of the multi-process event store tests (test/contract/eventStore.test.ts,
 * test/contract/postgresEventStore.test.ts).
 *
 * Usage: node --import tsx storeAppender.ts <dbFile | postgres://...> <worker> <count> <raceStream> <rounds>
 * Prints "ready", waits for a line on stdin (so every child starts at once), then, interleaved:
 * - appends <count> events one by one to its own stream `mp-<worker>`, with numeric expected revisions;
 * - for each round r of <rounds>, once <raceStream> holds r events, appends one event to it expecting
 *   revision r - 1 ('no_stream' for r = 0): exactly one process may win each round.
 * Ends by printing one JSON line: { worker, appended, wins }.
 */
import { createInterface } from 'node:readline';
import { WrongExpectedRevisionError } from '../../../shared/eventStore/eventStore.ts';
import { openPostgresEventStore } from '../../../shared/eventStore/postgresEventStore.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';

const USAGE = ['store', 'worker', 'count', 'race stream', 'rounds'];
const arg = (i: number): string => {
  const value = process.argv[2 + i];
  if (value === undefined) throw new Error(`usage: storeAppender.ts <${USAGE.join('> <')}>: missing <${USAGE[i]}>`);
  return value;
};
const [target, worker, countArg, raceStream, roundsArg] = [arg(0), arg(1), arg(2), arg(3), arg(4)];
const count = Number(countArg);
const rounds = Number(roundsArg);
const store = target.startsWith('postgres://') ? openPostgresEventStore(target) : openSqliteEventStore(target);
const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

async function ownAppends() {
  for (let i = 0; i < count; i++) {
    await store.appendToStream(`mp-${worker}`, [{ type: 'Appended', data: { worker, i } }], {
      expectedRevision: i === 0 ? 'no_stream' : i - 1,
    });
    await yieldToLoop();
  }
}

async function race(): Promise<number[]> {
  const wins: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Every contender waits for the previous round to be decided, so each round is a real race.
    while (((await store.readStream(raceStream, { direction: 'backwards', maxCount: 1 }))[0]?.revision ?? -1) < round - 1) {
      await yieldToLoop();
    }
    try {
      await store.appendToStream(raceStream, [{ type: 'Won', data: { worker, round } }], {
        expectedRevision: round === 0 ? 'no_stream' : round - 1,
      });
      wins.push(round);
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
    }
    await yieldToLoop();
  }
  return wins;
}

const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await new Promise((resolve) => lines.once('line', resolve));
lines.close();
const [, wins] = await Promise.all([ownAppends(), race()]);
await store.close();
process.stdout.write(`${JSON.stringify({ worker, appended: count, wins })}\n`);

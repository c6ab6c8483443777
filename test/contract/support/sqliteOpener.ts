/**
 * Child process of the SQLite open race test (test/contract/eventStore.test.ts).
 * Usage: node --import tsx sqliteOpener.ts <dbFile>...
 * For each file in turn: prints "ready", waits for a line on stdin (so every child opens at once),
 * opens the store, appends one event, closes it and prints "opened". One process serves every
 * round: a race needs fresh files, not fresh processes. Any error exits non-zero, on stderr.
 */
import { createInterface } from 'node:readline';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';

const files = process.argv.slice(2);
if (files.length === 0) throw new Error('usage: sqliteOpener.ts <database file>...');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
for (const file of files) {
  process.stdout.write('ready\n');
  await lines.next();
  const store = openSqliteEventStore(file);
  await store.appendToStream(`opener-${process.pid}`, [{ type: 'Opened', data: {} }]);
  await store.close();
  process.stdout.write('opened\n');
}
process.exit(0);

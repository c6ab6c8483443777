/**
 * Child process of the SQLite open race test (test/contract/eventStore.test.ts).
 * Usage: node --import tsx sqliteOpener.ts <dbFile>
 * Prints "ready", waits for a line on stdin (so every child opens at once), opens the store, appends
 * one event and exits 0; any error exits non-zero with the error on stderr.
 */
import { createInterface } from 'node:readline';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';

const [file] = process.argv.slice(2);
if (!file) throw new Error('usage: sqliteOpener.ts <database file>');
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once('line', resolve));
lines.close();
const store = openSqliteEventStore(file);
await store.appendToStream(`opener-${process.pid}`, [{ type: 'Opened', data: {} }]);
await store.close();
process.stdout.write(JSON.stringify({ opened: file }) + '\n');

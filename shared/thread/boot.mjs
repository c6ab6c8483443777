// A worker thread's entry point. On Node 20 a worker does not inherit the module hooks the main
// thread registered with `--import tsx`, so a TypeScript entry registers tsx here first.
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) (await import('tsx/esm/api')).register();
await import(workerData.entry);

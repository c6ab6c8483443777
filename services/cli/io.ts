import type { Write } from './output.ts';

/** Where a command writes and what it reads from its environment (process.* in main.ts). */
export interface Io {
  out: Write;
  err: Write;
  env: NodeJS.ProcessEnv;
}

/** Starts the child processes of the multi-process event store tests. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const APPENDER = fileURLToPath(new URL('./storeAppender.ts', import.meta.url));

export interface AppenderResult {
  worker: string;
  appended: number;
  wins: number[];
}

/** Starts a child that prints "ready", waits for a line on stdin, works, and prints one JSON line. */
export function spawnAppender(args: string[], script = APPENDER) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    stdio: 'pipe',
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk) => (err += chunk));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.startsWith('ready\n')) resolve();
    });
    child.once('exit', () => reject(new Error(`appender exited before it was ready: ${err}`)));
  });
  const done = new Promise<AppenderResult>((resolve, reject) => {
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`appender exited with ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!));
    });
  });
  done.catch(() => undefined); // observed through Promise.all below; avoids an unhandled rejection meanwhile
  return { child, ready, done };
}

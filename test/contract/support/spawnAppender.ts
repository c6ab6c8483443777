/** Starts the child processes of the multi-process event store tests. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const APPENDER = fileURLToPath(new URL('./storeAppender.ts', import.meta.url));
const OPENER = fileURLToPath(new URL('./sqliteOpener.ts', import.meta.url));

export interface AppenderResult {
  worker: string;
  appended: number;
  wins: number[];
}

/** Starts a child that prints "ready", waits for a line on stdin, works, and prints one JSON line. */
export function spawnAppender(args: string[]) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', APPENDER, ...args], {
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

/**
 * Starts sqliteOpener.ts on `files`: `line(text)` resolves on its next stdout line, which must be
 * `text` (it rejects on another line or an exit first); `exited` gives its exit code.
 */
export function spawnOpener(files: string[]) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', OPENER, ...files], { cwd: ROOT, stdio: 'pipe' });
  let err = '';
  child.stderr.on('data', (chunk) => (err += chunk));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
  return {
    child,
    exited,
    async line(text: string) {
      const next = await lines.next();
      if (next.done || next.value !== text) throw new Error(`opener: expected "${text}", got ${next.done ? 'its exit' : `"${next.value}"`}: ${err}`);
    },
  };
}

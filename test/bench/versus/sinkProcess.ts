// The processes the versus benches start beside the contenders: the sink every contender calls
// (versus/sink.ts, in its own process so its CPU is never counted as a contender's), the loops,
// and Tock's ticking jobs registered through the API as a user would.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { stopTree, type TockProcess } from './tock.ts';

const ROOT = join(import.meta.dirname, '../../..');

/** `node --import tsx <args>` from the checkout's root, in a process group of its own (stopTree ends it whole). */
export function child(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
}

export const untilLine = (c: ChildProcess, pattern: RegExp) =>
  new Promise<RegExpExecArray>((resolve, reject) => {
    let out = '';
    c.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = pattern.exec(out);
      if (m) resolve(m);
    });
    c.once('exit', (code) => reject(new Error(`exited with ${code} before printing ${pattern}`)));
  });

/** What the sink saw of the occurrences scheduled in [from, to) ms: lateness from the scheduled instant to arrival. */
export interface SinkStats {
  calls: number;
  distinct: number;
  doubled: number;
  p50: number;
  p99: number;
  max: number;
}

export interface Sink {
  url: string;
  stats(fromMs: number, toMs: number): Promise<SinkStats>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
  const c = child(['test/bench/versus/sink.ts'], {});
  const url = `http://127.0.0.1:${(await untilLine(c, /listening (\d+)/))[1]}`;
  return {
    url,
    stats: async (from, to) => (await fetch(`${url}/__stats?from=${from}&to=${to}`)).json() as Promise<SinkStats>,
    reset: async () => void (await fetch(`${url}/__reset`)),
    stop: () => stopTree(c),
  };
}

/**
 * Registers `n` jobs on `expression` calling the sink with their scheduled instant in the URL
 * (`__timestamp_ms__`), 1000 a call as cron_batch_add takes them; `path` tells one set from another.
 * Resolves to the seconds it took.
 */
export async function registerTicking(tock: TockProcess, sink: string, n: number, expression = '* * * * * *', path = 'tock', token = tock.token): Promise<number> {
  const t0 = performance.now();
  for (let from = 0; from < n; from += 1000) {
    const data = Array.from({ length: Math.min(1000, n - from) }, (_, k) => ({ url: `${sink}/${path}/${from + k}?s=__timestamp_ms__`, expression, name: `${path} ${from + k}` }));
    await tock.callAs(token, 'cron_batch_add', { data });
  }
  return (performance.now() - t0) / 1000;
}

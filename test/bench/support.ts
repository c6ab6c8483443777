import v8 from 'node:v8';
import vm from 'node:vm';
import { Agent, request } from 'undici';

export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export function figures(latenessMs: number[]) {
  const sorted = [...latenessMs].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
}

export const fmt = (f: { n: number; p50: number; p99: number; max: number }) => `n=${f.n} p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms, max ${f.max.toFixed(0)} ms`;

/**
 * The yardstick: undici alone firing `count` GETs at `url` at one instant (connections warmed
 * first, as Tock's executor keeps them), lateness measured where the target receives them.
 */
export async function rawBurst(url: string, count: number, at: number) {
  const agent = new Agent({ connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });
  await Promise.all(Array.from({ length: 256 }, (_, i) => request(`${url}/warm/${i}`, { dispatcher: agent }).then((r) => r.body.dump())));
  await new Promise((r) => setTimeout(r, at - Date.now()));
  const started = Date.now();
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      request(`${url}/raw/${i}`, { dispatcher: agent, headers: { 'x-tock-scheduled-time': String(at / 1000) } }).then((r) => r.body.dump()),
    ),
  );
  const drainMs = Date.now() - started;
  await agent.close();
  return { drainMs };
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Heap in use after two full collections: what is really held. */
export function heapUsed() {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

export function percentiles(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
  return `p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, max ${(s[s.length - 1] ?? 0).toFixed(1)} ms (n=${s.length})`;
}

import type { Logger } from './log.ts';

/**
 * Whether a process can do its work now, as a set of named conditions each component keeps up to
 * date ("jobs view" caught up, "bus" connected, "event store" writable, ...). The process is ready
 * when every condition it has declared holds. The gRPC health service and the HTTP /readyz both
 * read it, so an orchestrator stops routing to a replica that is catching up or has lost its
 * store or bus, and routes to it again once it has recovered.
 */
export interface Readiness {
  /** Declares or updates a condition; `detail` says why it does not hold (shown by /readyz). */
  set(condition: string, ok: boolean, detail?: string): void;
  /** Forgets a condition (its component stopped). */
  clear(condition: string): void;
  ready(): boolean;
  /** Whether one condition holds (an undeclared one does not). */
  holds(condition: string): boolean;
  /** The conditions that do not hold, with why. */
  failing(): Record<string, string>;
  /** Called with the new state each time ready() changes; returns an unsubscribe. */
  onChange(listener: (ready: boolean) => void): () => void;
}

export function createReadiness(log?: Logger): Readiness {
  const conditions = new Map<string, { ok: boolean; detail: string }>();
  const listeners = new Set<(ready: boolean) => void>();
  const isReady = () => [...conditions.values()].every((c) => c.ok);
  let last = isReady();
  const changed = () => {
    const now = isReady();
    if (now === last) return;
    last = now;
    for (const listener of [...listeners]) listener(now);
  };
  return {
    set(condition, ok, detail = ok ? '' : 'not ready') {
      const before = conditions.get(condition);
      conditions.set(condition, { ok, detail });
      if (before?.ok !== ok && before !== undefined) {
        if (ok) log?.info('recovered', { condition });
        else log?.warn('not ready', { condition, detail });
      }
      changed();
    },
    clear(condition) {
      conditions.delete(condition);
      changed();
    },
    ready: isReady,
    holds: (condition) => conditions.get(condition)?.ok === true,
    failing() {
      const out: Record<string, string> = {};
      for (const [name, c] of conditions) if (!c.ok) out[name] = c.detail;
      return out;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export interface WatchOptions {
  /** Time between probes (default 1 s). */
  everyMs?: number;
  /** A probe slower than this counts as a failure (default 2 s). */
  timeoutMs?: number;
  /** Words before the failure's message in /readyz (e.g. "writes fail"). */
  failing?: string;
}

/**
 * Keeps `condition` equal to whether `probe` succeeds: run every `everyMs`, a probe slower than
 * `timeoutMs` failing. What a store or database behind a service needs, so that readiness goes
 * false while it is away and true again once it answers, with no restart. Returns a stop function.
 */
export function watchCondition(readiness: Readiness, condition: string, probe: () => Promise<unknown>, options: WatchOptions = {}) {
  const everyMs = options.everyMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 2000;
  const failing = options.failing ?? 'unreachable';
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // At most one probe at a time: a slow one is waited for again, never piled on.
  let inFlight: Promise<unknown> | null = null;
  const check = async () => {
    let timeout: NodeJS.Timeout | undefined;
    try {
      inFlight ??= probe().finally(() => (inFlight = null));
      await Promise.race([
        inFlight,
        new Promise((_, reject) => (timeout = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
      ]);
      if (!stopped) readiness.set(condition, true);
    } catch (error) {
      if (!stopped) readiness.set(condition, false, `${failing}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(timeout);
      // check catches everything itself: nothing to await or handle here.
      if (!stopped) timer = setTimeout(() => void check(), everyMs);
    }
  };
  void check();
  return () => {
    stopped = true;
    clearTimeout(timer);
    readiness.clear(condition);
  };
}

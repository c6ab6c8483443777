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

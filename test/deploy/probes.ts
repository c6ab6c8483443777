/**
 * The kubelet's probe bookkeeping for one container, as a pure state machine fed with probe
 * results: the startup probe runs alone until it succeeds (failureThreshold failures: restart);
 * then readiness flips after successThreshold successes / failureThreshold failures, and
 * failureThreshold liveness failures in a row restart the container.
 */
import type { Obj } from './kubelet.ts';

export type ProbeKind = 'startup' | 'readiness' | 'liveness';

export interface ProbeTiming {
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

/** The probe with Kubernetes' defaults filled in. */
export function timing(probe: Obj): ProbeTiming {
  return {
    initialDelaySeconds: probe.initialDelaySeconds ?? 0,
    periodSeconds: probe.periodSeconds ?? 10,
    timeoutSeconds: probe.timeoutSeconds ?? 1,
    successThreshold: probe.successThreshold ?? 1,
    failureThreshold: probe.failureThreshold ?? 3,
  };
}

export interface ProbeState {
  started: boolean;
  ready: boolean;
  /** Consecutive results of the same outcome, per probe. */
  streak: Record<ProbeKind, { ok: boolean; count: number }>;
}

export type ProbeEvent = 'started' | 'ready' | 'unready' | 'restart' | null;

export const initialState = (hasStartup: boolean): ProbeState => ({
  started: !hasStartup,
  ready: false,
  streak: { startup: { ok: false, count: 0 }, readiness: { ok: false, count: 0 }, liveness: { ok: true, count: 0 } },
});

/** Which probes the kubelet runs now: the startup probe alone until it passes, then the others. */
export const activeProbes = (state: ProbeState, probes: Partial<Record<ProbeKind, Obj>>): ProbeKind[] =>
  state.started ? (['readiness', 'liveness'] as const).filter((k) => probes[k]) : probes.startup ? ['startup'] : [];

/** One probe result in; the new state and what the kubelet does about it. */
export function observe(state: ProbeState, kind: ProbeKind, probe: Obj, ok: boolean): { state: ProbeState; event: ProbeEvent } {
  const t = timing(probe);
  const prev = state.streak[kind];
  const count = prev.ok === ok ? prev.count + 1 : 1;
  const next: ProbeState = { ...state, streak: { ...state.streak, [kind]: { ok, count } } };
  if (kind === 'startup') {
    if (ok) return { state: { ...next, started: true }, event: 'started' };
    return { state: next, event: count >= t.failureThreshold ? 'restart' : null };
  }
  if (kind === 'liveness') return { state: next, event: !ok && count >= t.failureThreshold ? 'restart' : null };
  if (ok && !state.ready && count >= t.successThreshold) return { state: { ...next, ready: true }, event: 'ready' };
  if (!ok && state.ready && count >= t.failureThreshold) return { state: { ...next, ready: false }, event: 'unready' };
  return { state: next, event: null };
}

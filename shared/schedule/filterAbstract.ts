
/**
 * A filter seen as sets of field values, so a search can ask "could any minute of this day (or
 * hour of this month) pass?" and skip the whole span when the answer is no, instead of testing
 * every candidate. Each variable's possible values form a set of 0..63 (every field fits), held
 * as two 32-bit masks. A condition that reads one variable is folded at compile time into the
 * set of values that make it true (`hour == 1 and hour == 2` is the empty set), so the common
 * filters are answered exactly; only a condition that compares two variables with each other
 * (`minute == hour`) is answered by trying the combinations, or "maybe" when they are many.
 */

/** The wall-clock values a filter sees for one run; weekday is 0 (Sunday)..6. */
export interface FilterVars {
  minute: number;
  hour: number;
  day: number;
  month: number;
  weekday: number;
}

/** A compiled filter: true keeps the run. */
export type FilterFn = (v: FilterVars) => boolean;

/** Variable order in masks and domains. */
export const VAR_INDEX: Readonly<Record<keyof FilterVars, number>> = { minute: 0, hour: 1, day: 2, month: 3, weekday: 4 };
const NAMES = ['minute', 'hour', 'day', 'month', 'weekday'] as const;

export type Abs =
  | { k: 'const'; value: boolean }
  /** True exactly when variable `v` has a value in the set (lo: 0..31, hi: 32..63). */
  | { k: 'leaf'; v: number; lo: number; hi: number }
  | { k: 'and' | 'or'; kids: Abs[] }
  | { k: 'not'; kid: Abs }
  /** Reads two or more variables (bit mask `vars`): tried on each combination. */
  | { k: 'opaque'; vars: number; test: FilterFn };

/** Possible values per variable (index VAR_INDEX), as masks. */
export interface Domains {
  lo: number[];
  hi: number[];
}

export const CAN_TRUE = 1;
export const CAN_FALSE = 2;

const single = (vars: number) => (vars & (vars - 1)) === 0;
const bitIndex = (vars: number) => 31 - Math.clz32(vars);

/** A condition on at most one variable (bit mask `vars`) as a constant or a leaf, by trying all 64 values. */
function fold(test: FilterFn, vars: number): Abs {
  const probe: FilterVars = { minute: 0, hour: 0, day: 0, month: 0, weekday: 0 };
  if (vars === 0) return { k: 'const', value: test(probe) };
  const v = bitIndex(vars);
  let lo = 0;
  let hi = 0;
  for (let x = 0; x < 64; x++) {
    probe[NAMES[v]!] = x;
    if (test(probe)) x < 32 ? (lo |= 1 << x) : (hi |= 1 << (x - 32));
  }
  return { k: 'leaf', v, lo, hi };
}

/** A comparison or `in`: folded when it reads at most one variable, opaque otherwise. */
export function absAtom(test: FilterFn, vars: number): Abs {
  return single(vars) ? fold(test, vars) : { k: 'opaque', vars, test };
}

export function absNot(a: Abs): Abs {
  if (a.k === 'const') return { k: 'const', value: !a.value };
  if (a.k === 'leaf') return { k: 'leaf', v: a.v, lo: ~a.lo, hi: ~a.hi };
  if (a.k === 'not') return a.kid;
  return { k: 'not', kid: a };
}

/** `and` / `or`, flattened, with leaves of one variable merged into one set. */
export function absJoin(k: 'and' | 'or', a: Abs, b: Abs): Abs {
  const kids: Abs[] = [];
  for (const x of [a, b]) {
    if (x.k === 'const') {
      if (x.value === (k === 'or')) return x; // true or _, false and _
      continue;
    }
    if (x.k === k) kids.push(...x.kids);
    else kids.push(x);
  }
  const merged: Abs[] = [];
  for (const x of kids) {
    const same = x.k === 'leaf' ? merged.findIndex((m) => m.k === 'leaf' && m.v === x.v) : -1;
    if (same < 0) {
      merged.push(x);
      continue;
    }
    const m = merged[same] as Extract<Abs, { k: 'leaf' }>;
    const y = x as Extract<Abs, { k: 'leaf' }>;
    merged[same] = k === 'and' ? { k: 'leaf', v: m.v, lo: m.lo & y.lo, hi: m.hi & y.hi } : { k: 'leaf', v: m.v, lo: m.lo | y.lo, hi: m.hi | y.hi };
  }
  if (merged.length === 0) return { k: 'const', value: k === 'and' };
  return merged.length === 1 ? merged[0]! : { k, kids: merged };
}

/** Combinations an opaque condition is tried on before it answers "maybe". */
const OPAQUE_LIMIT = 64;
const scratch: FilterVars = { minute: 0, hour: 0, day: 0, month: 0, weekday: 0 };

function opaque(test: FilterFn, vars: number, d: Domains): number {
  let count = 1;
  const list: number[][] = [];
  for (let v = 0; v < 5; v++) {
    if (!(vars & (1 << v))) continue;
    const values: number[] = [];
    for (let x = 0; x < 64; x++) if ((x < 32 ? d.lo[v]! >>> x : d.hi[v]! >>> (x - 32)) & 1) values.push(x);
    count *= values.length;
    if (count === 0) return 0;
    if (count > OPAQUE_LIMIT) return CAN_TRUE | CAN_FALSE;
    list[v] = values;
  }
  let result = 0;
  const assign = (v: number): void => {
    if (v === 5) {
      result |= test(scratch) ? CAN_TRUE : CAN_FALSE;
      return;
    }
    if (!list[v]) return assign(v + 1);
    for (const x of list[v]) {
      scratch[NAMES[v]!] = x;
      assign(v + 1);
      if (result === (CAN_TRUE | CAN_FALSE)) return;
    }
  };
  assign(0);
  return result;
}

/**
 * What the filter can be when each variable ranges over its domain: CAN_TRUE, CAN_FALSE or both
 * (0 when a domain is empty). Never wrong about "cannot": a span it calls CAN_FALSE alone holds
 * no passing candidate. Exact when every domain holds one value.
 */
export function evalAbs(a: Abs, d: Domains): number {
  switch (a.k) {
    case 'const':
      return a.value ? CAN_TRUE : CAN_FALSE;
    case 'leaf': {
      const lo = d.lo[a.v]!;
      const hi = d.hi[a.v]!;
      const t = (a.lo & lo) | (a.hi & hi) ? CAN_TRUE : 0;
      return (~a.lo & lo) | (~a.hi & hi) ? t | CAN_FALSE : t;
    }
    case 'and': {
      let r = CAN_TRUE;
      for (const kid of a.kids) {
        const x = evalAbs(kid, d);
        if (!(x & CAN_TRUE)) return x & CAN_FALSE;
        r |= x & CAN_FALSE;
      }
      return r;
    }
    case 'or': {
      let r = CAN_FALSE;
      for (const kid of a.kids) {
        const x = evalAbs(kid, d);
        if (!(x & CAN_FALSE)) return x & CAN_TRUE;
        r |= x & CAN_TRUE;
      }
      return r;
    }
    case 'not': {
      const x = evalAbs(a.kid, d);
      return ((x & CAN_TRUE) << 1) | ((x & CAN_FALSE) >> 1);
    }
    case 'opaque':
      return opaque(a.test, a.vars, d);
  }
}

const MINUTE_LO = -1;
const MINUTE_HI = (1 << 28) - 1;
const out: [number, number] = [0, 0];

/**
 * The minutes (0..59, as masks lo/hi) at which the filter passes when every other variable has
 * its value in `v`: exact, since only one variable is left free. The pair is reused: copy it.
 */
export function minuteMask(a: Abs, v: FilterVars): readonly [number, number] {
  const [lo, hi] = minutes(a, v);
  out[0] = lo;
  out[1] = hi & MINUTE_HI;
  return out;
}

function minutes(a: Abs, v: FilterVars): [number, number] {
  switch (a.k) {
    case 'const':
      return a.value ? [MINUTE_LO, MINUTE_HI] : [0, 0];
    case 'leaf': {
      if (a.v === 0) return [a.lo, a.hi];
      const x = v[NAMES[a.v]!];
      return (x < 32 ? a.lo >>> x : a.hi >>> (x - 32)) & 1 ? [MINUTE_LO, MINUTE_HI] : [0, 0];
    }
    case 'and':
    case 'or': {
      const and = a.k === 'and';
      let lo = and ? MINUTE_LO : 0;
      let hi = and ? MINUTE_HI : 0;
      for (const kid of a.kids) {
        const [l, h] = minutes(kid, v);
        if (and) {
          lo &= l;
          hi &= h;
        } else {
          lo |= l;
          hi |= h;
        }
      }
      return [lo, hi];
    }
    case 'not': {
      const [l, h] = minutes(a.kid, v);
      return [~l, ~h];
    }
    case 'opaque': {
      const probe = { ...v };
      let lo = 0;
      let hi = 0;
      for (let m = 0; m < 60; m++) {
        probe.minute = m;
        if (a.test(probe)) m < 32 ? (lo |= 1 << m) : (hi |= 1 << (m - 32));
      }
      return [lo, hi];
    }
  }
}

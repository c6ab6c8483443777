import { DAY, HOUR, SECOND } from './civil.ts';

/**
 * An IANA time zone as a table of UTC offsets. Intl.DateTimeFormat is the only source of truth,
 * but it costs about a microsecond per call, so offsets are found once per chunk of 50 days
 * (one sample a day, then a binary search to the second for each change) and kept. After that
 * an offset lookup is a map hit and a short scan: no Date or Intl object on the hot path.
 *
 * Limitation (documented, not hit by any zone in use today): two changes within one day that
 * cancel out are not seen.
 */
export class Zone {
  private readonly chunks = new Map<number, Chunk>();
  private last: Chunk | undefined;
  private readonly format: Intl.DateTimeFormat | null;

  constructor(readonly name: string) {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    this.format =
      resolved === 'UTC'
        ? null
        : new Intl.DateTimeFormat('en-US', {
            timeZone: name,
            hourCycle: 'h23',
            year: 'numeric',
            month: 'numeric',
            day: 'numeric',
            hour: 'numeric',
            minute: 'numeric',
            second: 'numeric',
          });
  }

  /** True when the offset never changes (UTC and its aliases): callers can skip DST logic. */
  get isUtc(): boolean {
    return this.format === null;
  }

  /** UTC offset in ms at instant t (wall = t + offset). */
  offsetAt(t: number): number {
    if (this.format === null) return 0;
    const c = this.chunkOf(t);
    const { starts, offsets } = c;
    let i = starts.length - 1;
    while (i > 0 && starts[i]! > t) i--;
    return offsets[i]!;
  }

  /** Local wall clock (ms) at instant t. */
  wallAt(t: number): number {
    return t + this.offsetAt(t);
  }

  /**
   * The first instant after t at which the offset may change: a real transition or the end of a
   * cached chunk (where it usually does not change). Callers treat it as "constant until here".
   */
  spanEnd(t: number): number {
    if (this.format === null) return Infinity;
    const c = this.chunkOf(t);
    for (let i = 1; i < c.starts.length; i++) if (c.starts[i]! > t) return c.starts[i]!;
    return c.end;
  }

  /**
   * The instant(s) whose wall time is `wall`. Returns the earlier instant when the wall time
   * exists twice. When it does not exist (inside a gap), returns NaN and sets `gap` to the
   * transition instant and the offset before it, so callers apply their own rule.
   */
  instantOf(wall: number, gap?: GapInfo): number {
    if (this.format === null) return wall;
    // Every solution lies within +-26 h of `wall` (offsets are within +-24 h); scan those spans in
    // order so the first solution found is the earliest.
    let t = wall - 26 * HOUR;
    let prevOffset = NaN;
    while (t <= wall + 26 * HOUR) {
      const offset = this.offsetAt(t);
      const end = this.spanEnd(t);
      if (prevOffset === prevOffset && offset > prevOffset && wall >= t + prevOffset && wall < t + offset) {
        if (gap) {
          gap.transition = t;
          gap.offsetBefore = prevOffset;
        }
        return NaN;
      }
      const candidate = wall - offset;
      if (candidate >= t && candidate < end) return candidate;
      prevOffset = offset;
      t = end;
    }
    // Unreachable for real zones; fall back to the plain offset rather than fail.
    return wall - this.offsetAt(wall);
  }

  /**
   * Wall time to instant with the interval / one-time rule: a repeated wall time takes the
   * earlier instant; a missing one moves forward by the length of the gap (02:30 -> 03:30).
   */
  instantOfShifted(wall: number): number {
    const gap = scratchGap;
    const t = this.instantOf(wall, gap);
    return t === t ? t : wall - gap.offsetBefore;
  }

  private chunkOf(t: number): Chunk {
    const last = this.last;
    if (last !== undefined && t >= last.start && t < last.end) return last;
    const k = Math.floor(t / CHUNK);
    let c = this.chunks.get(k);
    if (c === undefined) {
      c = this.computeChunk(k);
      this.chunks.set(k, c);
    }
    this.last = c;
    return c;
  }

  private computeChunk(k: number): Chunk {
    const start = k * CHUNK;
    const end = start + CHUNK;
    const starts = [start];
    const offsets = [this.sample(start)];
    let lo = start;
    let loOffset = offsets[0]!;
    for (let s = start + DAY; s <= end; s += DAY) {
      const probe = Math.min(s, end - SECOND);
      // Find every change between lo and probe; a loop because one day may hold two changes.
      while (this.sample(probe) !== loOffset) {
        let a = lo;
        let b = probe;
        while (b - a > SECOND) {
          const mid = a + Math.floor((b - a) / 2 / SECOND) * SECOND;
          if (this.sample(mid) === loOffset) a = mid;
          else b = mid;
        }
        loOffset = this.sample(b);
        lo = b;
        starts.push(b);
        offsets.push(loOffset);
      }
      lo = probe;
    }
    return { start, end, starts, offsets };
  }

  /** Offset at t (whole seconds), straight from Intl. */
  private sample(t: number): number {
    const text = this.format!.format(t);
    const m = SAMPLE_RE.exec(text);
    if (!m) throw new Error(`unexpected Intl output for ${this.name}: ${text}`);
    const wall = Date.UTC(+m[3]!, +m[1]! - 1, +m[2]!, +m[4]!, +m[5]!, +m[6]!);
    return wall - Math.floor(t / SECOND) * SECOND;
  }
}

/** Where a missing wall time falls: the instant the clock jumps, and the offset before it. */
export interface GapInfo {
  transition: number;
  offsetBefore: number;
}

interface Chunk {
  start: number;
  end: number;
  /** Instants where an offset begins; starts[0] is the chunk start. */
  starts: number[];
  offsets: number[];
}

/** 50 days: a multiple of a day and a second, and short enough to hold at most a few changes. */
const CHUNK = 50 * DAY;
const SAMPLE_RE = /(\d+)\/(\d+)\/(\d+),? (\d+):(\d+):(\d+)/;
const scratchGap: GapInfo = { transition: 0, offsetBefore: 0 };

const zones = new Map<string, Zone>();

/** The shared Zone for an IANA name, or null when the name is not a zone. Valid names are cached. */
export function getZone(name: string): Zone | null {
  const cached = zones.get(name);
  if (cached !== undefined) return cached;
  // Intl also accepts offset strings on newer engines; we promise IANA names only.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return null;
  let z: Zone;
  try {
    z = new Zone(name);
  } catch {
    return null;
  }
  // Only valid names are kept, and only so many spellings of them (Intl ignores case).
  if (zones.size < 5000) zones.set(name, z);
  return z;
}

/** True when `name` is a valid IANA zone name (also 'UTC'); case-insensitive, like Intl. */
export function isValidTimeZone(name: string): boolean {
  return typeof name === 'string' && getZone(name) !== null;
}

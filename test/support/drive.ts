import type { FakeClock } from '../../shared/clock.ts';
import { sleep, type Falsy } from './waitFor.ts';

export interface DriveOptions {
  /** How far the clock moves per step. */
  stepMs?: number;
  /** How far the clock may move in all before `drive` gives up. */
  maxMs?: number;
  /** Real time between steps, for real I/O (a target's socket, gRPC, the store) to go on. */
  pauseMs?: number;
}

/**
 * The fake-clock twin of `waitFor`: moves `clock` forward a step at a time, yielding real time
 * between steps, until `check` returns a truthy value, and returns that value. Fails once the
 * clock has moved `maxMs` without it, naming `what` it drove towards. Use it where what is
 * waited for comes with time passing on the system's clock; a fixed stretch of fake time is
 * `drive(clock, () => clock.now() >= end, ...)`.
 */
export async function drive<T>(clock: FakeClock, check: () => T | Falsy | Promise<T | Falsy>, what: string, options: DriveOptions = {}): Promise<T> {
  const { stepMs = 100, maxMs = 30_000, pauseMs = 5 } = options;
  const limit = clock.now() + maxMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (clock.now() >= limit) throw new Error(`the clock moved ${maxMs} ms without ${what}`);
    await clock.advance(Math.min(stepMs, limit - clock.now()));
    await sleep(pauseMs);
  }
}

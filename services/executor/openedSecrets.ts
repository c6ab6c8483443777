import type { Sealer } from '../../shared/job/index.ts';

/**
 * Secrets this executor has opened, kept by their sealed text. A job's sealed values, and its
 * account's signing secret above all, are the same from one run to the next, and each opening
 * sets up a cipher: at thousands of runs a second that was a large part of the run path. The
 * executor holds the key that opens them anyway, so keeping the clear values in its memory
 * exposes nothing more. Bounded: the oldest entry goes first.
 */
export function rememberOpened(sealer: Sealer, max = 10_000): Sealer {
  const opened = new Map<string, string>();
  return {
    seal: (plain) => sealer.seal(plain),
    open(value) {
      const known = opened.get(value);
      if (known !== undefined) return known;
      const clear = sealer.open(value);
      if (opened.size >= max) opened.delete(opened.keys().next().value!);
      opened.set(value, clear);
      return clear;
    },
  };
}

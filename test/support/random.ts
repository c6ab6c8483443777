/** xorshift: repeatable pseudo-random numbers in [0, 1) for a test, from `seed`. */
export function random(seed: number) {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

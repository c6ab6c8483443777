/**
 * FastCron's `R` fields, drawn deterministically. The seed is (job id, local date, field), so
 * the planner, `cron_next` and the CLI all compute the same minutes and hours for a job on a
 * given day, in any process, with no stored state. The algorithm is part of the contract: changing
 * it moves every random job's runs, so keep it as is.
 */

/** The field an R draw is for; part of the seed so minute and hour draws are independent. */
export type RandomField = 'minute' | 'hour';

const FIELD_SALT: Record<RandomField, number> = { minute: 0x6d696e, hour: 0x686f75 };

/** murmur3's 32-bit finaliser: a cheap, well-mixed hash step (also the planner's delay draw). */
export function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The seed for one job, one local date (YYYY-MM-DD as numbers) and one field. */
export function drawSeed(jobId: number, year: number, month: number, day: number, field: RandomField): number {
  // Job ids may exceed 32 bits; fold the high part in rather than dropping it.
  const hi = Math.floor(jobId / 0x100000000) >>> 0;
  let h = mix((jobId >>> 0) ^ 0x9e3779b9);
  h = mix(h ^ hi);
  h = mix(h ^ (year * 10000 + month * 100 + day));
  return mix(h ^ FIELD_SALT[field]);
}

/** The crontab fields an `H` can stand in; part of the hash so a job's H minute and H hour differ. */
export type SpreadField = 'second' | 'minute' | 'hour' | 'day' | 'month' | 'weekday';

const SPREAD_SALT: Record<SpreadField, number> = {
  second: 0x736563,
  minute: 0x6d696e,
  hour: 0x686f75,
  day: 0x646179,
  month: 0x6d6f6e,
  weekday: 0x776b64,
};

/**
 * The hash behind `H` (stable spread): a function of the job id and the field alone, so every
 * replica, every restart and every edit of the job computes the same value with nothing stored.
 * Like drawSeed, the algorithm is part of the contract: changing it moves every `H` job.
 */
export function spreadHash(jobId: number, field: SpreadField): number {
  const hi = Math.floor(jobId / 0x100000000) >>> 0;
  // A different start constant from drawSeed's, so a job's H values and its R draws are unrelated.
  let h = mix((jobId >>> 0) ^ 0x7f4a7c15);
  h = mix(h ^ hi);
  return mix(h ^ SPREAD_SALT[field]);
}

/** mulberry32: a small, fast generator with a full 2^32 period; enough for picking minutes. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/**
 * `count` distinct values from `pool` (ascending, no duplicates), chosen by a partial
 * Fisher-Yates shuffle seeded with `seed`; returned in ascending order.
 */
export function drawDistinct(pool: readonly number[], count: number, seed: number): number[] {
  const next = generator(seed);
  const a = pool.slice();
  const n = Math.min(count, a.length);
  for (let i = 0; i < n; i++) {
    // Modulo bias is below 1e-7 for pools of at most 60 values: irrelevant here.
    const j = i + (next() % (a.length - i));
    const tmp = a[i]!;
    a[i] = a[j]!;
    a[j] = tmp;
  }
  return a.slice(0, n).sort((x, y) => x - y);
}

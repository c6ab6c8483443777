import { AppError } from '../../shared/errors.ts';

export const MAX_BATCH = 1000;
/**
 * New jobs of one batch written in one store transaction (appendMany): a few commits per batch
 * instead of one per job, and a transaction short enough not to hold the thread (SQLite's runs on
 * it) for long.
 */
export const APPEND_CHUNK = 250;
/** Writes of one batch under way at once: enough to keep a PostgreSQL pool busy, few enough that their continuations fit in a slice. */
export const WRITES_IN_FLIGHT = 16;

/**
 * The one batch limit of the API, for every function that takes several jobs (`data`) or ids
 * (`id`): the gateway passes batches through, so it holds for every caller of this service.
 */
export function checkBatchSize(count: number, field: 'data' | 'id') {
  if (count > MAX_BATCH) throw new AppError('LIMIT_EXCEEDED', `at most ${MAX_BATCH} ${field === 'data' ? 'cron jobs' : 'ids'} per batch, got ${count}`, { field: [field] });
}

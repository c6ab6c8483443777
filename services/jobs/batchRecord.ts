import { createHash } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import { WrongExpectedRevisionError, type EventStore } from '../../shared/eventStore/eventStore.ts';

/**
 * An idempotent cron_batch_add: before any job of a batch sent with an idempotency key is
 * created, the batch is recorded (its job ids and a hash of its elements) in a stream of its
 * own, appended only if the stream does not exist yet. A retry with the same key reads that
 * record and creates only the jobs still missing, under the same ids, so it never duplicates
 * one; the same key with another batch is refused. Once the batch is written, the gateway records
 * the answer it made (recordAnswer): a replay answers exactly that, computed fields (nextRun, the
 * jobs' health) included, instead of what they would be now.
 */
export interface BatchRecord {
  ids: number[];
  hash: string;
  /** The API answer's `data` as JSON, once recorded. */
  answer?: string;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

export function checkIdempotencyKey(key: string) {
  if (!KEY.test(key)) throw new AppError('INVALID_PARAMETER', 'must be 1 to 255 visible ASCII characters (no spaces)', { field: ['idempotencyKey'] });
}

/** Scoped per account; the key is hashed so any visible character is fine in a stream name. */
export const batchStream = (accountId: number, key: string) => `batch-${accountId}-${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;

/** What identifies a batch's content: every element's settings and run order, in order. */
export function batchHash(elements: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(elements, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))
    .digest('hex');
}

export async function readBatch(store: EventStore, stream: string): Promise<BatchRecord | null> {
  const [first, answered] = await store.readStream<BatchRecord>(stream, { maxCount: 2 });
  if (!first) return null;
  const record: BatchRecord = { ids: first.data.ids, hash: first.data.hash };
  return answered?.type === 'BatchAnswered' ? { ...record, answer: answered.data.answer } : record;
}

/**
 * Records the answer of a batch written under `stream`, right after its record (revision 0), so
 * only the first answer is kept; returns the answer kept (a concurrent request's, if it was first).
 */
export async function recordAnswer(store: EventStore, stream: string, answer: string, at: number): Promise<string> {
  const record = await readBatch(store, stream);
  if (!record) throw new AppError('NOT_FOUND', 'no batch was recorded under this key', { field: ['idempotencyKey'] });
  if (record.answer !== undefined) return record.answer;
  try {
    await store.appendToStream(stream, [{ type: 'BatchAnswered', data: { answer, at } }], { expectedRevision: 0 });
    return answer;
  } catch (error) {
    if (!(error instanceof WrongExpectedRevisionError)) throw error;
    return (await readBatch(store, stream))!.answer!;
  }
}

/** Records the batch, or returns the record a concurrent request with the same key wrote first. */
export async function recordBatch(store: EventStore, stream: string, record: BatchRecord, at: number): Promise<BatchRecord> {
  try {
    await store.appendToStream(stream, [{ type: 'BatchStarted', data: { ...record, at } }], { expectedRevision: 'no_stream' });
    return record;
  } catch (error) {
    if (!(error instanceof WrongExpectedRevisionError)) throw error;
    return (await readBatch(store, stream))!;
  }
}

export function sameBatch(record: BatchRecord, hash: string) {
  if (record.hash !== hash) throw new AppError('INVALID_PARAMETER', 'already used for a different batch; use a new key for new jobs', { field: ['idempotencyKey'] });
}

import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import type { Watermark } from './catchUp.ts';

/** Where the planner records how far it has published. Not a `cronjob` stream: the projection never sees it. */
export const WATERMARK_STREAM = 'planner-watermark';
/** Only the newest watermarks matter; the stream is capped so it never grows. */
export const WATERMARK_KEEP = 100;

interface PlannedUpTo {
  at: number;
  /** The event-store position applied when it was written (a bigint, as a string in JSON). */
  position: string;
}

/** The highest watermark recorded by any planner replica, or null on the first start ever. */
export async function readWatermark(store: EventStore): Promise<Watermark | null> {
  const events = await store.readStream<PlannedUpTo>(WATERMARK_STREAM, { direction: 'backwards', maxCount: WATERMARK_KEEP });
  let best: Watermark | null = null;
  for (const e of events) {
    if (e.type !== 'PlannedUpTo' || !Number.isFinite(e.data?.at)) continue;
    let position: bigint;
    try {
      position = BigInt(e.data.position);
    } catch {
      continue;
    }
    // Replicas write their own; each pair (at, position) is consistent on its own, so take the furthest.
    if (!best || e.data.at > best.at) best = { at: e.data.at, position };
  }
  return best;
}

export async function writeWatermark(store: EventStore, w: Watermark) {
  const data: PlannedUpTo = { at: w.at, position: w.position.toString() };
  await store.appendToStream(WATERMARK_STREAM, [{ type: 'PlannedUpTo', data: data as unknown as Record<string, unknown> }]);
}

/** An execution event ready for the bus: where it goes and its bytes. */
export interface EncodedExecution {
  subject: string;
  data: Uint8Array;
}

/**
 * The runs this replica has called, newest last, with their execution event until the bus has
 * stored it. When the bus goes away mid-run (a NATS restart), the ack or the event of a run
 * already called is lost and the run comes back: it must be finished, not called again. Bounded:
 * a redelivery comes within minutes, so the oldest entries are forgotten first.
 */
export function createCalledRuns(capacity = 100_000) {
  const runs = new Map<string, EncodedExecution | null>();
  return {
    /** undefined: never called here; null: called and its event stored; else the event still to store. */
    get: (runId: string) => runs.get(runId),
    called(runId: string, event: EncodedExecution) {
      runs.delete(runId);
      runs.set(runId, event);
      if (runs.size > capacity) runs.delete(runs.keys().next().value!);
    },
    stored(runId: string) {
      if (runs.has(runId)) runs.set(runId, null);
    },
  };
}

/**
 * Requests made in one turn of the event loop that one call can answer together: each is gathered
 * under its key until the turn ends (setImmediate), then `run` gets the requests of each key and
 * returns one answer per request, in order. Under load a gateway parses several API requests per
 * turn, and each used to make the same read of its own (the same token checked, the same account's
 * next runs asked); one call per key now serves them all.
 *
 * A request joins only a call that starts after it was made, never one already on its way, so its
 * answer is no older than the request itself: a token revoked before the request came is refused.
 */
export function perTurn<Req, Res>(keyOf: (request: Req) => string, run: (requests: Req[]) => Promise<(Res | Promise<Res>)[]>): (request: Req) => Promise<Res> {
  interface Batch {
    requests: Req[];
    waiters: { resolve: (answer: Res | Promise<Res>) => void; reject: (error: unknown) => void }[];
  }
  let pending = new Map<string, Batch>();
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const batches = pending;
    pending = new Map();
    for (const { requests, waiters } of batches.values()) {
      Promise.resolve()
        .then(() => run(requests))
        .then(
          (answers) => waiters.forEach((w, i) => w.resolve(answers[i]!)),
          (error: unknown) => waiters.forEach((w) => w.reject(error)),
        );
    }
  };

  return (request) =>
    new Promise<Res>((resolve, reject) => {
      const key = keyOf(request);
      let batch = pending.get(key);
      if (!batch) pending.set(key, (batch = { requests: [], waiters: [] }));
      batch.requests.push(request);
      batch.waiters.push({ resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}

/** The columns of an event row the tail needs besides what it hands back as is. */
export interface TailRow {
  position: number;
  stream: string;
  revision: number;
  category: string;
}

/**
 * The rows one SQLite store object appended last, kept as they were inserted, so that the
 * subscriptions following the store read them from memory instead of from the file. In embedded
 * mode three or four subscriptions (the jobs view, the planner, the notifier's view) each read every
 * append back, one page query per wake-up; that was a tenth of the CPU of a cron_add.
 *
 * The tail is only ever a contiguous run of positions up to the file's last one: it is given up
 * as soon as another connection commits to the file (`otherWriter`) or an append does not follow
 * its last position, and a page from before its start or after its end is read from the file. A
 * page says how far it accounts for the file (`through`), so a subscriber of one category moves
 * past the rows of others instead of scanning them again on each read. Rows this store deleted
 * afterwards (a stream's max count) are not handed out.
 */
export function createAppendedTail<Row extends TailRow>(capacity = 2048) {
  let rows: Row[] = [];
  /** Per stream this store truncated: revisions up to this one are deleted. */
  const cut = new Map<string, number>();

  return {
    /** After a commit of this store: the rows it inserted, in position order. */
    appended(inserted: Row[]) {
      const first = inserted[0];
      if (!first) return;
      const last = rows[rows.length - 1];
      if (last && first.position !== last.position + 1) rows = [];
      for (const row of inserted) rows.push(row);
      if (rows.length > 2 * capacity) rows = rows.slice(-capacity);
    },

    truncated(stream: string, upToRevision: number) {
      cut.set(stream, Math.max(cut.get(stream) ?? -1, upToRevision));
    },

    /** Another connection wrote to the file: rows may follow the tail's end that it does not hold. */
    otherWriter() {
      rows = [];
    },

    /**
     * Up to `limit` rows after `checkpoint` (of `category` when given), as the file holds them,
     * and the position up to which the page accounts for every row; undefined when the tail does
     * not hold the row right after the checkpoint.
     */
    page(checkpoint: number, category: string | undefined, limit: number): { rows: Row[]; through: number } | undefined {
      const first = rows[0];
      if (!first) return undefined;
      let i = checkpoint + 1 - first.position;
      if (i < 0 || i >= rows.length) return undefined;
      const out: Row[] = [];
      let through = checkpoint;
      for (; i < rows.length && out.length < limit; i++) {
        const row = rows[i]!;
        through = row.position;
        if (category !== undefined && row.category !== category) continue;
        if ((cut.get(row.stream) ?? -1) >= row.revision) continue;
        out.push(row);
      }
      return { rows: out, through };
    },
  };
}

/**
 * The links a notification carries for each of its jobs when TOCK_PUBLIC_URL is set: each opens a
 * page of the gateway's that says what it would do and acts only on a POST from that page. The
 * notifier signs them (services/notifier/actionLinks.ts); here only what the messages show.
 */

export type LinkAction = 'pause1h' | 'run' | 'logs' | 'silence';
export type ActionLinks = Record<LinkAction, string>;
/** The jobs of one message that get action links (the first ones, as a chat shows them). */
export const LINKED_JOBS = 10;

/** The fact rows of the links, in display order; a chat shows each as a link. */
export const LINK_ROWS: [string, LinkAction][] = [
  ['Logs', 'logs'],
  ['Pause for 1 hour', 'pause1h'],
  ['Run now', 'run'],
  ['Silence until it recovers', 'silence'],
];
const LINK_LABELS = new Map(LINK_ROWS.map(([k]) => [k, k === 'Logs' ? 'View logs' : k]));
/** The label of a fact row that is a link, undefined for a row of text. */
export const linkLabel = (row: string) => LINK_LABELS.get(row);

export type Write = (line: string) => void;

/** The API's job status numbers, as words for people (the numbers stay in --json). */
const JOB_STATUS: Record<number, string> = { 0: 'active', 1: 'disabled', 4: 'auto-disabled', 5: 'paused', 6: 'stopped' };
const RESULT_STATUS: Record<number, string> = { 0: 'succeeded', 1: 'failed', 2: 'skipped' };

export const jobStatus = (n: number) => JOB_STATUS[n] ?? String(n);
export const resultStatus = (n: number) => RESULT_STATUS[n] ?? String(n);

/** Unix seconds as an ISO-8601 UTC instant; empty for none. */
export const instant = (seconds: number | null | undefined) => (seconds ? new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') : '');

/** Tab-separated rows under a header: readable in a terminal, easy for cut and awk. */
export function table(out: Write, header: string[], rows: unknown[][]) {
  out(header.join('\t'));
  for (const row of rows) out(row.map((cell) => text(cell).replace(/[\t\n]/g, ' ')).join('\t'));
}

/** A value as one cell: nothing for null, JSON for an object or array. */
function text(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return value.toString();
    case 'object':
      return value === null ? '' : JSON.stringify(value);
    default:
      return '';
  }
}

/** One `name: value` line per field of a record. */
export function fields(out: Write, record: Record<string, unknown>) {
  for (const [name, value] of Object.entries(record)) out(`${name}: ${text(value)}`);
}

export const json = (out: Write, data: unknown) => out(JSON.stringify(data, null, 2));

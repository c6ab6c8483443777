import type { HttpResult } from './httpCall.ts';
import type { RunJob } from './buildRequest.ts';

/** FC keeps the first and the last 4 KiB of a body; the middle is dropped, `downloaded` counts it. */
export const OUTPUT_EDGE_BYTES = 4096;
export const TRUNCATION_MARKER = '\n\n[... Tock: output truncated, only the first and last 4 KiB are kept ...]\n\n';

/**
 * Keeps the first and last OUTPUT_EDGE_BYTES of a stream of chunks in bounded memory, so a
 * multi-gigabyte body costs the same as a small one.
 */
export class OutputCapture {
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);
  total = 0;

  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.head.length < OUTPUT_EDGE_BYTES) {
      const take = Math.min(OUTPUT_EDGE_BYTES - this.head.length, rest.length);
      this.head = Buffer.concat([this.head, rest.subarray(0, take)]);
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    // Copy, so the kept tail never pins a large chunk from the socket.
    this.tail =
      rest.length >= OUTPUT_EDGE_BYTES
        ? Buffer.from(rest.subarray(rest.length - OUTPUT_EDGE_BYTES))
        : Buffer.concat([this.tail, rest]).subarray(-OUTPUT_EDGE_BYTES);
  }

  /** Bytes dropped between head and tail. */
  get omitted(): number {
    return this.total - this.head.length - this.tail.length;
  }

  text(): string {
    if (this.omitted === 0) return Buffer.concat([this.head, this.tail]).toString('utf8');
    return this.head.toString('utf8') + TRUNCATION_MARKER + this.tail.toString('utf8');
  }
}

export interface Verdict {
  ok: boolean;
  error: string;
}

/** Searched per kept part, so the marker we inserted can neither hide nor fake a match. */
function outputContains(output: string, needle: string): boolean {
  return output.split(TRUNCATION_MARKER).some((part) => part.includes(needle));
}

/**
 * Success (DECISIONS 6): a final 2xx, `keyword` present and `pattern` absent in the kept output.
 * The error is a sentence a person reads in the log.
 */
export function judge(result: HttpResult, job: Pick<RunJob, 'keyword' | 'pattern'>): Verdict {
  const output = typeof result.output === 'string' ? result.output : '';
  if (result.error) return { ok: false, error: result.error };
  const status = Number(result.httpStatus);
  if (!status) return { ok: false, error: 'no HTTP response' };
  if (status < 200 || status > 299) return { ok: false, error: `HTTP ${status}` };
  const keyword = String(job.keyword ?? '');
  if (keyword !== '' && !outputContains(output, keyword)) {
    return { ok: false, error: `keyword ${JSON.stringify(keyword)} not found in the output` };
  }
  const pattern = String(job.pattern ?? '');
  if (pattern !== '' && outputContains(output, pattern)) {
    return { ok: false, error: `pattern ${JSON.stringify(pattern)} found in the output` };
  }
  return { ok: true, error: '' };
}

import type { HttpResult } from './httpCall.ts';
import type { RunJob } from './buildRequest.ts';
import { TRUNCATION_MARKER } from './outputCapture.ts';

export interface Verdict {
  ok: boolean;
  error: string;
}

/** Searched per kept part, so the marker we inserted can neither hide nor fake a match. */
function outputContains(output: string, needle: string): boolean {
  return output.split(TRUNCATION_MARKER).some((part) => part.includes(needle));
}

/**
 * Success (docs/api.md (What every call to your URL carries)): a final 2xx, `keyword` present and `pattern` absent in the kept output.
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

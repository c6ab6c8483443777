import { h } from './dom.ts';
import { formatDuration } from './format.ts';

/** cron_test's answer (docs/api.md, "Testing settings before saving"). */
export interface TestResult {
  status: number;
  httpStatus: number;
  error: string;
  executionTime: number;
  downloaded: number;
  ip: string;
  server: string;
  url: string;
  headers: { name: string; value: string }[];
  output: string;
}

/** What a test call got, as the form shows it: the verdict a run would get, then the response itself. */
export function testResultView(r: TestResult): Node[] {
  const item = (k: string, v: string) => [h('dt', {}, k), h('dd', {}, v)];
  const succeeded = r.status === 0;
  return [
    h('h2', {}, 'Test call'),
    h('p', { className: `test-outcome result-${succeeded ? 0 : 1}`, attrs: { id: 'test-outcome' } }, succeeded ? 'Succeeded: a run would count as a success.' : `Failed: ${r.error}`),
    h(
      'dl',
      { className: 'settings' },
      ...item('URL', r.url),
      ...item('HTTP status', r.httpStatus ? String(r.httpStatus) : 'no response'),
      ...item('Duration', formatDuration(r.executionTime)),
      ...item('IP', r.ip || '-'),
      ...item('Called by', r.server || '-'),
      ...item('Downloaded', `${r.downloaded} bytes`),
    ),
    r.headers.length
      ? h('details', { attrs: { id: 'test-headers' } }, h('summary', {}, `Response headers (${r.headers.length})`), h('dl', { className: 'settings' }, ...r.headers.flatMap((x) => item(x.name, x.value))))
      : h('p', { className: 'hint' }, 'No response headers.'),
    h('h3', {}, 'Response body'),
    r.output ? h('pre', { className: 'output-full', attrs: { id: 'test-body' } }, r.output) : h('p', { className: 'hint' }, 'empty'),
  ];
}

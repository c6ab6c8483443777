/** A few Prometheus counters, hand-rolled: requests and their duration, by function and code. */
export function createMetrics() {
  const requests = new Map<string, number>();
  const seconds = new Map<string, number>();
  return {
    observe(fn: string, code: number, durationSeconds: number) {
      const key = `function="${fn}",code="${code}"`;
      requests.set(key, (requests.get(key) ?? 0) + 1);
      seconds.set(fn, (seconds.get(fn) ?? 0) + durationSeconds);
    },
    render(): string {
      const lines = ['# HELP tock_api_requests_total API requests by function and result code.', '# TYPE tock_api_requests_total counter'];
      for (const [key, n] of requests) lines.push(`tock_api_requests_total{${key}} ${n}`);
      lines.push('# HELP tock_api_request_seconds_total Time spent answering API requests.', '# TYPE tock_api_request_seconds_total counter');
      for (const [fn, s] of seconds) lines.push(`tock_api_request_seconds_total{function="${fn}"} ${s.toFixed(6)}`);
      return lines.join('\n') + '\n';
    },
  };
}

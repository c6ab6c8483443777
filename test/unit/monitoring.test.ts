import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { collectProcessMetrics, registry } from '../../shared/metrics.ts';

const ROOT = join(import.meta.dirname, '../..');
const MONITORING = join(ROOT, 'deploy/monitoring');
const docsOf = (file: string) => yaml.loadAll(readFileSync(join(ROOT, file), 'utf8')).filter(Boolean) as any[];

/** deploy/monitoring and the alerts in docs/operations.md must name metrics Tock really exports, on ports it really serves. */
describe('monitoring manifests and dashboard (deploy/monitoring)', () => {
  collectProcessMetrics();
  const exported = new Set(registry.getMetricsAsArray().map((m) => m.name));
  // A histogram's series carry suffixes; a PromQL name may be any of them.
  const known = (name: string) => exported.has(name) || exported.has(name.replace(/_(bucket|count|sum)$/, ''));
  const metricNames = (expr: string) => [...expr.matchAll(/\b((?:tock|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!); // group 1 always takes part

  it('every dashboard panel queries metrics that exist', () => {
    const dashboard = JSON.parse(readFileSync(join(MONITORING, 'tock-dashboard.json'), 'utf8'));
    const exprs = dashboard.panels.flatMap((p: any) => p.targets.map((t: any) => t.expr as string));
    expect(exprs.length).to.be.above(10);
    for (const expr of exprs) for (const name of metricNames(expr)) expect(known(name), `${name} in "${expr}"`).to.equal(true);
    for (const needed of ['tock_executions_total', 'tock_run_lateness_seconds_bucket', 'tock_api_request_duration_seconds_count', 'tock_eventstore_append_duration_seconds_bucket', 'tock_bus_consumer_pending_messages', 'process_cpu_seconds_total', 'process_resident_memory_bytes']) {
      expect(exprs.join('\n'), needed).to.include(needed);
    }
  });

  it('every alert in docs/operations.md queries metrics that exist', () => {
    const page = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const start = page.indexOf('### Alerts worth setting');
    expect(start, 'the alerts section').to.be.at.least(0);
    const section = page.slice(start, page.indexOf('\n## ', start));
    const names = metricNames(section);
    expect(names.length).to.be.above(8);
    for (const name of names) expect(known(name), name).to.equal(true);
  });

  it('the PrometheusRule holds the alerts of docs/operations.md, expression and duration as written, each with its runbook section there', () => {
    const page = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const start = page.indexOf('| alert | PromQL | why |');
    const table = page.slice(start, page.indexOf('\n\n', start));
    const rows = [...table.matchAll(/^\| [^|]+ \| `([^`]+)`(?: for (\w+))? \| [^|]+ \|$/gm)].map((m) => ({ expr: m[1]!, for: m[2] }));
    const [rule] = docsOf('deploy/monitoring/prometheusrule.yaml');
    const alerts: any[] = rule.spec.groups.flatMap((g: any) => g.rules);
    expect(rows.length).to.be.above(8);
    expect(alerts.map((a) => ({ expr: a.expr, for: a.for }))).to.deep.equal(rows);
    const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    for (const a of alerts) {
      expect(a.annotations.runbook, a.alert).to.equal(`docs/operations.md#${a.alert.toLowerCase()}`);
      expect(operations, a.alert).to.match(new RegExp(`^### ${a.alert}$`, 'm'));
    }
  });

  it('each ServiceMonitor selects a Service with the port it scrapes, and the Services reach OPS_PORT', () => {
    const services = [...docsOf('deploy/monitoring/metrics-services.yaml'), ...docsOf('deploy/k8s/base/gateway.yaml').filter((d) => d.kind === 'Service')];
    const monitors = docsOf('deploy/monitoring/servicemonitors.yaml');
    expect(monitors.map((m) => m.metadata.labels['app.kubernetes.io/name']).sort()).to.deep.equal(['executor', 'gateway', 'jobs', 'logs', 'notifier', 'planner']);
    for (const monitor of monitors) {
      const selected = services.filter((s) => Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v));
      expect(selected, monitor.metadata.name).to.have.length(1);
      for (const endpoint of monitor.spec.endpoints) expect(selected[0].spec.ports.map((p: any) => p.name), monitor.metadata.name).to.include(endpoint.port);
    }
    for (const s of docsOf('deploy/monitoring/metrics-services.yaml')) expect(s.spec.ports[0].targetPort, s.metadata.name).to.equal(9464);
  });

  it('kubectl kustomize builds it (skipped without kubectl)', function () {
    const run = spawnSync('kubectl', ['kustomize', MONITORING], { encoding: 'utf8' });
    if (run.error) {
      console.log('      (skipped: kubectl is not installed; the monitoring files are still checked above)');
      this.skip();
    }
    expect(run.status, run.stderr).to.equal(0);
    const kinds = (yaml.loadAll(run.stdout) as any[]).map((d) => d.kind);
    expect(kinds.filter((k) => k === 'ServiceMonitor')).to.have.length(6);
    expect(kinds).to.include('PrometheusRule');
    expect(kinds).to.include('ConfigMap');
  });
});

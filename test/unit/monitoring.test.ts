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

  describe('the Grafana dashboard (tock-dashboard.json)', () => {
    const dashboard = JSON.parse(readFileSync(join(MONITORING, 'tock-dashboard.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: any) => p.targets.map((t: any) => t.expr as string));
    // docs/metrics.md names each metric in backquotes in its table; `process_*` stands for a family.
    const metricsPage = readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8');
    const documentedNames = [...metricsPage.matchAll(/^\|.*$/gm)].flatMap((row) => [...row[0].split('|')[1]!.matchAll(/`([a-z0-9_*]+)`/g)].map((m) => m[1]!));
    const documented = (name: string) =>
      documentedNames.some((d) => (d.endsWith('*') ? name.startsWith(d.slice(0, -1)) : d === name || d === name.replace(/_(bucket|count|sum)$/, '')));

    it('every panel queries metrics that exist and that docs/metrics.md describes', () => {
      expect(exprs.length).to.be.above(10);
      expect(documentedNames.length, 'metric names read from docs/metrics.md').to.be.above(10);
      for (const expr of exprs) {
        for (const name of metricNames(expr)) {
          expect(known(name), `${name} in "${expr}" is exported`).to.equal(true);
          expect(documented(name), `${name} in "${expr}" is in docs/metrics.md`).to.equal(true);
        }
      }
    });

    it("shows what an operator looks at first, the planner's publish, duplicate and error counters included", () => {
      const needed = ['tock_executions_total', 'tock_run_lateness_seconds_bucket', 'tock_api_request_duration_seconds_count', 'tock_eventstore_append_duration_seconds_bucket', 'tock_bus_consumer_pending_messages', 'process_cpu_seconds_total', 'process_resident_memory_bytes'];
      for (const name of [...needed, 'tock_planner_published_total', 'tock_planner_duplicates_total', 'tock_planner_publish_errors_total']) expect(exprs.join('\n'), name).to.include(name);
    });

    it('has a namespace variable, and every metric of every query is limited by it', () => {
      const variable = dashboard.templating.list.find((v: any) => v.name === 'namespace');
      expect(variable, 'a template variable named namespace').to.be.an('object');
      expect(variable.type).to.equal('query');
      const query: string = variable.query.query ?? variable.query;
      const values = /^label_values\((\w+), namespace\)$/.exec(query);
      expect(values, `the namespace variable's query "${query}"`).to.not.equal(null);
      expect(known(values![1]!), `${values![1]} is exported by every service`).to.equal(true);
      for (const expr of exprs) {
        // Each metric name, then its selector: the namespace matcher must be in it.
        for (const m of expr.matchAll(/\b((?:tock|process|nodejs)_[a-z0-9_]+)(\{[^}]*\})?/g)) {
          expect(m[2] ?? '', `${m[1]} in "${expr}"`).to.include('namespace=~"$namespace"');
        }
      }
    });

    it('gives every panel an id of its own and a place of its own on the grid', () => {
      const ids = dashboard.panels.map((p: any) => p.id);
      expect(new Set(ids).size, 'panel ids').to.equal(ids.length);
      const cells = new Set<string>();
      for (const p of dashboard.panels) {
        const { x, y, w, h } = p.gridPos;
        expect(x + w, `${p.title} fits the 24 columns`).to.be.at.most(24);
        for (let i = x; i < x + w; i++) for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i},${j}`), `${p.title} overlaps another panel`).to.equal(false);
          cells.add(`${i},${j}`);
        }
      }
    });
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
    // The gateway too: its API port answers /metrics with 404.
    for (const monitor of monitors) expect(monitor.spec.endpoints.map((e: any) => e.port), monitor.metadata.name).to.deep.equal(['metrics']);
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

// Dashboards and alerts (contract §16; docs/operations.md): the alert rules
// pass `promtool check rules`, the PrometheusRule of the Kubernetes component
// holds the same groups, and every metric a dashboard panel or a rule names
// is on /metrics of a running stack with every role (api, gateway, worker) at
// level 3, where every instrument exists.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { separateStack } from '../support/separate-stack.js';
import { repoRoot } from '../support/stack-process.js';

const RULES = join(repoRoot, 'infra/prometheus/rules.yaml');
const GRAFANA = join(repoRoot, 'infra/grafana');
const PROMETHEUS_RULE = join(repoRoot, 'k8s/components/monitoring/prometheusrule.yaml');

interface RuleFile {
  groups: { name: string; rules: { alert?: string; record?: string; expr: string; annotations?: Record<string, string> }[] }[];
}
interface Dashboard {
  uid: string;
  title: string;
  templating: { list: { name: string; type: string }[] };
  panels: { title: string; datasource: { uid: string }; targets: { expr: string }[] }[];
}

const rules = parse(readFileSync(RULES, 'utf8')) as RuleFile;
const dashboards = readdirSync(GRAFANA)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(GRAFANA, file), 'utf8')) as Dashboard }));

/** Words of PromQL that are not metric names. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'and', 'or', 'unless', 'inf', 'nan']);

/** The metric names a PromQL expression selects (not functions, labels, keywords or durations). */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = stripped.slice(m.index + m[0].length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, cmd)));
}

describe('alert rules and dashboards', function () {
  this.timeout(120_000);

  it('reads metric names out of PromQL (the checker below relies on it)', function () {
    expect(metricNames('sum by (le, route) (rate(axid_x_bucket{route!~"/a|b", le="1"}[5m])) / on (job) group_left axid_y > 0.5')).to.deep.equal([
      'axid_x_bucket',
      'axid_y',
    ]);
    expect(metricNames('time() - max(axid_z)')).to.deep.equal(['axid_z']);
  });

  it('pass promtool check rules', function () {
    if (!onPath('promtool')) {
      throw new Error('promtool is not installed: `apt-get install -y prometheus` (Debian) puts it on PATH; .ci/run installs it');
    }
    const run = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(run.status, `${run.stdout}\n${run.stderr}`).to.equal(0);
    expect(run.stdout).to.match(/SUCCESS: \d+ rules found/);
  });

  it('cover what contract §16 names, each with a runbook section in docs/operations.md', function () {
    const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
    for (const alert of ['AxidHigh5xxRatio', 'AxidHighP99Latency', 'AxidOutboxLag', 'AxidStreamDeliveryLag', 'AxidSubscriptionDeliveryLag', 'AxidJobBacklog', 'AxidJobFailures', 'AxidReplicaLag', 'AxidDependencyErrors']) {
      expect(alerts).to.include(alert);
    }
    const docs = readFileSync(join(repoRoot, 'docs/operations.md'), 'utf8');
    for (const group of rules.groups) {
      for (const rule of group.rules) {
        const anchor = rule.annotations?.runbook_url?.split('#')[1];
        expect(anchor, `${rule.alert} runbook_url`).to.equal(rule.alert!.toLowerCase());
        expect(docs, `docs/operations.md has a section for ${rule.alert}`).to.match(new RegExp(`^#+ ${rule.alert}$`, 'm'));
      }
    }
  });

  it('are the same rules in the PrometheusRule of k8s/components/monitoring', function () {
    const resource = parse(readFileSync(PROMETHEUS_RULE, 'utf8')) as { kind: string; spec: RuleFile };
    expect(resource.kind).to.equal('PrometheusRule');
    expect(resource.spec).to.deep.equal(rules);
  });

  it('ship the five dashboards, each panel on the datasource variable with a query', function () {
    expect(dashboards.map((d) => d.file)).to.deep.equal(['axid-api.json', 'axid-dependencies.json', 'axid-gateway.json', 'axid-relay-outbox.json', 'axid-worker-queues.json']);
    const uids = new Set<string>();
    for (const { file, dashboard } of dashboards) {
      expect(uids.has(dashboard.uid), `${file}: uid`).to.equal(false);
      uids.add(dashboard.uid);
      expect(dashboard.templating.list.map((v) => `${v.name}:${v.type}`), file).to.include('datasource:datasource');
      expect(dashboard.panels.length, file).to.be.greaterThan(3);
      for (const panel of dashboard.panels) {
        expect(panel.datasource.uid, `${file} ${panel.title}`).to.equal('${datasource}');
        expect(panel.targets.length, `${file} ${panel.title}`).to.be.greaterThan(0);
      }
    }
  });

  describe('against a running stack', function () {
    let exposed: Map<string, string>;
    let stop: () => Promise<void>;

    before(async function () {
      const s = await separateStack({ FEATURE_LEVEL: '3', ROLES: 'api,gateway,worker' });
      stop = s.stop;
      const res = await fetch(`${s.stack.url}/metrics`);
      expect(res.status).to.equal(200);
      // `# TYPE <name> <type>`: a labelled instrument with no series yet (a replica's lag without replicas) is listed too.
      exposed = new Map([...(await res.text()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    });

    after(async function () {
      await stop?.();
    });

    /** Whether /metrics has the series a name selects (a histogram's _bucket, _sum and _count included). */
    const isExposed = (name: string) => {
      if (exposed.has(name)) return true;
      const suffix = /_(bucket|sum|count)$/.exec(name);
      const base = suffix ? name.slice(0, -suffix[0].length) : null;
      return base !== null && ['histogram', 'summary'].includes(exposed.get(base) ?? '');
    };

    it('has every metric a dashboard panel or an alert rule names', function () {
      const named: { where: string; metric: string }[] = [];
      for (const { file, dashboard } of dashboards) {
        for (const panel of dashboard.panels) for (const t of panel.targets) for (const metric of metricNames(t.expr)) named.push({ where: `${file}: ${panel.title}`, metric });
      }
      for (const group of rules.groups) for (const rule of group.rules) for (const metric of metricNames(rule.expr)) named.push({ where: `rules.yaml: ${rule.alert}`, metric });
      expect(named.length).to.be.greaterThan(50);
      const missing = named.filter((n) => !isExposed(n.metric)).map((n) => `${n.where} names ${n.metric}`);
      expect(missing).to.deep.equal([]);
    });
  });
});

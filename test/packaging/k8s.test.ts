// Packaging checks (issue 7): every kustomize overlay under k8s/overlays is
// rendered, each resource is validated against the Kubernetes schemas of the
// `kubernetes-models` package, and the properties the deployment relies on are
// asserted. The Dockerfile, .dockerignore and docker-compose file are checked
// statically (Docker does not run on the CI machines).
//
// Rendering needs `kubectl` (kubectl kustomize) or `kustomize` (kustomize build)
// on PATH (no maintained npm package renders kustomize overlays); without
// either the overlay suites fail and say so.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as models from 'kubernetes-models';
import * as prometheusOperator from '@kubernetes-models/prometheus-operator';
import { parse, parseAllDocuments } from 'yaml';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const OVERLAYS_DIR = join(ROOT, 'k8s', 'overlays');
const COMPONENTS_DIR = join(ROOT, 'k8s', 'components');
const ROLES = ['api', 'gateway', 'worker'] as const;
const APP_PORT = 3000;
const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicaSet', 'Pod']);
/** Variables of shared/config.ts plus NODE_ENV; anything else in the config is a typo. */
const KNOWN_ENV = new Set([
  'ROLES', 'PORT', 'HOST', 'PUBLIC_BASE_URL', 'DATABASE_URL', 'REDIS_URL', 'REDIS_KEY_PREFIX',
  'S3_ENDPOINT', 'S3_REGION', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE',
  'DATA_DIR', 'BOOTSTRAP_ADMIN_KEY', 'RATE_LIMIT_POINTS', 'RATE_LIMIT_DURATION', 'TRACKER_HOSTS', 'CODE_HOSTS',
  'LOG_LEVEL', 'MIGRATE_ON_START', 'EMBEDDED', 'NODE_ENV', 'TRUSTED_PROXIES',
]);
const SECRET_ENV = ['DATABASE_URL', 'REDIS_URL', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'BOOTSTRAP_ADMIN_KEY'];
/**
 * Fields of core/v1 Container. The generated schemas accept unknown fields, so
 * a misspelt `readinesProbe` would otherwise validate (and be dropped by the
 * API server). Checked on every container of every workload.
 */
const CONTAINER_FIELDS = new Set([
  'name', 'image', 'command', 'args', 'workingDir', 'ports', 'envFrom', 'env', 'resources', 'resizePolicy',
  'restartPolicy', 'volumeMounts', 'volumeDevices', 'livenessProbe', 'readinessProbe', 'startupProbe',
  'lifecycle', 'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy', 'securityContext',
  'stdin', 'stdinOnce', 'tty',
]);
const POD_SPEC_FIELDS = new Set([
  'volumes', 'initContainers', 'containers', 'ephemeralContainers', 'restartPolicy', 'terminationGracePeriodSeconds',
  'activeDeadlineSeconds', 'dnsPolicy', 'nodeSelector', 'serviceAccountName', 'serviceAccount',
  'automountServiceAccountToken', 'nodeName', 'hostNetwork', 'hostPID', 'hostIPC', 'shareProcessNamespace',
  'securityContext', 'imagePullSecrets', 'hostname', 'subdomain', 'affinity', 'schedulerName', 'tolerations',
  'hostAliases', 'priorityClassName', 'priority', 'dnsConfig', 'readinessGates', 'runtimeClassName',
  'enableServiceLinks', 'preemptionPolicy', 'overhead', 'topologySpreadConstraints', 'setHostnameAsFQDN', 'os',
  'hostUsers', 'schedulingGates', 'resourceClaims',
]);

// ------------------------------------------------------------------ helpers --

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, cmd)));
}

/** The command that renders a kustomization directory, or null when none is installed. */
function kustomizeRenderer(): ((dir: string) => string) | null {
  const run = (cmd: string, args: string[]) => {
    const res = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (res.error) throw res.error;
    if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${res.status}):\n${res.stderr}`);
    return res.stdout;
  };
  if (onPath('kubectl')) return (dir) => run('kubectl', ['kustomize', dir]);
  if (onPath('kustomize')) return (dir) => run('kustomize', ['build', dir]);
  return null;
}

function parseDocs(text: string, source: string): Obj[] {
  const out: Obj[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJSON();
    if (value === null || value === undefined) continue;
    out.push(value as Obj);
  }
  return out;
}

type ModelClass = new (data: Obj) => { validate(): void };

/** The kubernetes-models class for an apiVersion and kind (e.g. networking.k8s.io/v1 Ingress). */
function modelFor(apiVersion: string, kind: string): ModelClass | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash === -1 ? '' : apiVersion.slice(0, slash);
  const version = slash === -1 ? apiVersion : apiVersion.slice(slash + 1);
  // "networking.k8s.io" -> "networkingK8sIo"; the core group lives at the top level ("v1").
  const groupKey = group
    .split(/[.-]/)
    .map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1)))
    .join('');
  // The Prometheus Operator's kinds (ServiceMonitor, PrometheusRule) from its models package.
  const root = { ...models, ...prometheusOperator } as unknown as Record<string, Record<string, Record<string, unknown>> | undefined>;
  const versions = group === '' ? root : root[groupKey];
  const ns = versions?.[version] as Record<string, unknown> | undefined;
  const cls = ns?.[kind];
  return typeof cls === 'function' ? (cls as ModelClass) : undefined;
}

/**
 * kustomize wraps long base64 Secret values over several lines; the API server
 * decodes them ignoring line breaks, the schema's "byte" format does not.
 */
function normalizeForSchema(r: Obj): Obj {
  if (r.kind !== 'Secret' || !r.data) return r;
  const data = Object.fromEntries(Object.entries(r.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')]));
  return { ...r, data };
}

const id = (r: Obj) => `${r.kind}/${r.metadata?.name as string}`;
const byKind = (all: Obj[], kind: string) => all.filter((r) => r.kind === kind);
function one(all: Obj[], kind: string, name: string): Obj {
  const found = all.find((r) => r.kind === kind && r.metadata?.name === name);
  expect(found, `${kind}/${name} is rendered`).to.not.equal(undefined);
  return found as Obj;
}
/** The pod spec of a workload, whatever its kind. */
function podTemplate(r: Obj): Obj | undefined {
  if (r.kind === 'Pod') return { metadata: r.metadata, spec: r.spec };
  if (r.kind === 'CronJob') return r.spec?.jobTemplate?.spec?.template;
  return r.spec?.template;
}
function containersOf(r: Obj): Obj[] {
  const spec = podTemplate(r)?.spec ?? {};
  return [...((spec.initContainers as Obj[] | undefined) ?? []), ...((spec.containers as Obj[] | undefined) ?? [])];
}
function matchesSelector(labels: Record<string, string> | undefined, selector: Obj | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries((selector.matchLabels as Record<string, string> | undefined) ?? {})) {
    if (l[k] !== v) return false;
  }
  for (const expr of (selector.matchExpressions as Obj[] | undefined) ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, expr.key as string);
    const value = l[expr.key as string];
    const values = (expr.values as string[] | undefined) ?? [];
    if (expr.operator === 'In' && !(has && values.includes(value as string))) return false;
    if (expr.operator === 'NotIn' && has && values.includes(value as string)) return false;
    if (expr.operator === 'Exists' && !has) return false;
    if (expr.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}
const commandLine = (c: Obj) => [...((c.command as string[]) ?? []), ...((c.args as string[]) ?? [])].join(' ');
const isDatastoreImage = (image: string) => /(^|\/)(postgres|redis|valkey|minio|mc)(:|@|$)/.test(image);
/** A generated name keeps its base name and adds `-<hash>`. */
const isNamed = (actual: unknown, base: string) =>
  typeof actual === 'string' && (actual === base || new RegExp(`^${base}-[a-z0-9]{10}$`).test(actual));

// --------------------------------------------------------------- overlays ----

const overlayNames = existsSync(OVERLAYS_DIR)
  ? readdirSync(OVERLAYS_DIR).filter((n) => statSync(join(OVERLAYS_DIR, n)).isDirectory()).sort()
  : [];

describe('k8s manifests', function () {
  it('has the dev and prod overlays', function () {
    expect(overlayNames).to.include.members(['dev', 'prod']);
  });

  for (const overlay of overlayNames) {
    describe(`overlay ${overlay}`, function () {
      let all: Obj[] = [];

      before(function () {
        this.timeout(60_000);
        const render = kustomizeRenderer();
        if (!render) throw new Error('rendering the overlays needs kubectl (kubectl kustomize) or kustomize on PATH');
        all = parseDocs(render(`k8s/overlays/${overlay}`), `k8s/overlays/${overlay}`);
      });

      it('renders well-formed resources with unique names', function () {
        expect(all.length).to.be.greaterThan(10);
        const seen = new Set<string>();
        for (const r of all) {
          expect(r.apiVersion, 'apiVersion').to.be.a('string');
          expect(r.kind, 'kind').to.be.a('string');
          expect(r.metadata?.name, `name of a ${r.kind as string}`).to.be.a('string');
          const key = `${r.kind as string}/${(r.metadata.namespace as string | undefined) ?? ''}/${r.metadata.name as string}`;
          expect(seen.has(key), `${key} is rendered once`).to.equal(false);
          seen.add(key);
        }
      });

      it('validates every resource against the Kubernetes schemas (kubernetes-models)', function () {
        const failures: string[] = [];
        for (const r of all) {
          const Model = modelFor(r.apiVersion as string, r.kind as string);
          if (!Model) {
            failures.push(`${id(r)}: no schema for ${r.apiVersion as string} ${r.kind as string}`);
            continue;
          }
          try {
            new Model(normalizeForSchema(r)).validate();
          } catch (err) {
            failures.push(`${id(r)}: ${(err as Error).message}`);
          }
          if (WORKLOAD_KINDS.has(r.kind as string)) {
            const spec = (podTemplate(r)?.spec as Obj | undefined) ?? {};
            for (const key of Object.keys(spec)) {
              if (!POD_SPEC_FIELDS.has(key)) failures.push(`${id(r)}: unknown pod spec field "${key}"`);
            }
            for (const c of containersOf(r)) {
              for (const key of Object.keys(c)) {
                if (!CONTAINER_FIELDS.has(key)) failures.push(`${id(r)}: unknown container field "${key}"`);
              }
            }
          }
        }
        expect(failures, failures.join('\n')).to.deep.equal([]);
      });

      it('puts every namespaced resource in one namespace', function () {
        const namespaces = new Set(all.filter((r) => r.kind !== 'Namespace').map((r) => r.metadata.namespace as unknown));
        expect([...namespaces]).to.have.length(1);
        expect([...namespaces][0]).to.be.a('string');
        const ns = byKind(all, 'Namespace').map((r) => r.metadata.name as string);
        expect(ns).to.deep.equal([...namespaces]);
      });

      for (const role of ROLES) {
        it(`deploys the ${role} role with probes, resources, ROLES, preStop and a locked-down pod`, function () {
          const d = one(all, 'Deployment', `axid-${role}`);
          expect(d.metadata.labels).to.include({ 'app.kubernetes.io/name': 'axid', 'app.kubernetes.io/component': role });
          const tpl = d.spec.template as Obj;
          expect(tpl.metadata.labels).to.include({ 'app.kubernetes.io/name': 'axid', 'app.kubernetes.io/component': role });
          expect(matchesSelector(tpl.metadata.labels, d.spec.selector), 'selector matches the pods').to.equal(true);
          expect(tpl.metadata.annotations).to.include({
            'prometheus.io/scrape': 'true',
            'prometheus.io/port': String(APP_PORT),
            'prometheus.io/path': '/metrics',
          });

          const spec = tpl.spec as Obj;
          const grace = spec.terminationGracePeriodSeconds as number;
          expect(grace, 'terminationGracePeriodSeconds').to.be.a('number');
          expect(grace).to.be.at.least({ api: 15, gateway: 30, worker: 60 }[role]);
          expect(spec.securityContext?.runAsNonRoot, 'runAsNonRoot').to.equal(true);

          const containers = spec.containers as Obj[];
          expect(containers).to.have.length(1);
          const c = containers[0] as Obj;
          const env = (c.env as Obj[] | undefined) ?? [];
          const roles = env.filter((e) => e.name === 'ROLES');
          expect(roles, 'one ROLES variable').to.have.length(1);
          expect(roles[0]?.value).to.equal(role);
          // The migration Job migrates: a role pod never runs migrations at start.
          const migrate = env.filter((e) => e.name === 'MIGRATE_ON_START');
          expect(migrate, 'one MIGRATE_ON_START variable').to.have.length(1);
          expect(migrate[0]?.value).to.equal('false');
          expect(commandLine(c)).to.match(/services\/main\.ts$/);
          expect(c.image, 'image').to.be.a('string').and.match(/(^|\/)axid(:|@)/);

          const ports = (c.ports as Obj[]).map((p) => [p.name as string, p.containerPort as number]);
          expect(ports).to.deep.include(['http', APP_PORT]);
          const probePort = (probe: Obj | undefined) => probe?.httpGet?.port as unknown;
          expect(c.readinessProbe?.httpGet?.path, 'readiness probe').to.equal('/readyz');
          expect(c.livenessProbe?.httpGet?.path, 'liveness probe').to.equal('/healthz');
          for (const p of [probePort(c.readinessProbe), probePort(c.livenessProbe)]) {
            expect([APP_PORT, 'http']).to.include(p);
          }

          const preStop = c.lifecycle?.preStop as Obj | undefined;
          expect(preStop, 'preStop hook').to.not.equal(undefined);
          const preStopCmd = ((preStop?.exec?.command as string[] | undefined) ?? []).join(' ');
          expect(preStopCmd !== '' || preStop?.sleep !== undefined, 'preStop sleeps').to.equal(true);
          if (preStopCmd !== '') expect(preStopCmd).to.match(/sleep \d+/);

          for (const kind of ['requests', 'limits'] as const) {
            expect(c.resources?.[kind], `resources.${kind}`).to.have.all.keys('cpu', 'memory');
          }
          expect(c.securityContext).to.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });

          // The writable places: /tmp and DATA_DIR, both emptyDir.
          const config = byKind(all, 'ConfigMap').find((cm) =>
            ((c.envFrom as Obj[] | undefined) ?? []).some((e) => e.configMapRef?.name === cm.metadata.name),
          );
          expect(config, 'envFrom names a rendered ConfigMap').to.not.equal(undefined);
          const dataDir = (config?.data?.DATA_DIR as string | undefined) ?? '/data';
          const emptyDirs = new Set(((spec.volumes as Obj[] | undefined) ?? []).filter((v) => v.emptyDir).map((v) => v.name));
          for (const path of ['/tmp', dataDir]) {
            const mount = ((c.volumeMounts as Obj[] | undefined) ?? []).find((m) => m.mountPath === path);
            expect(mount, `a volume mounted at ${path}`).to.not.equal(undefined);
            expect(emptyDirs.has(mount?.name), `${path} is an emptyDir`).to.equal(true);
          }
        });
      }

      it('reads settings from the ConfigMap and connection settings from the Secret axid-secrets', function () {
        const configs = byKind(all, 'ConfigMap').filter((cm) => isNamed(cm.metadata.name, 'axid-config'));
        expect(configs).to.have.length(1);
        const data = (configs[0]?.data as Record<string, string> | undefined) ?? {};
        for (const key of Object.keys(data)) expect(KNOWN_ENV.has(key), `ConfigMap key ${key} is a known setting`).to.equal(true);
        for (const key of SECRET_ENV) expect(data, 'no secret in the ConfigMap').to.not.have.property(key);
        // A pod missing a store stops with a message naming it (shared/embedded.ts), never an embedded stand-in.
        expect(data.EMBEDDED, 'EMBEDDED in the ConfigMap').to.equal('off');
        for (const name of [...ROLES.map((r) => `axid-${r}`)]) {
          const envFrom = (one(all, 'Deployment', name).spec.template.spec.containers[0].envFrom as Obj[] | undefined) ?? [];
          const refs = envFrom.map((e) => (e.configMapRef ? `cm:${e.configMapRef.name as string}` : `secret:${e.secretRef?.name as string}`));
          expect(refs.length, `${name} envFrom`).to.equal(2);
          expect(isNamed(refs[0]?.slice(3), 'axid-config'), `${name}: ConfigMap first`).to.equal(true);
          expect(refs[1]?.startsWith('secret:') && isNamed(refs[1].slice(7), 'axid-secrets'), `${name}: then axid-secrets`).to.equal(true);
        }
      });

      it('has Services for api, gateway and worker that reach their pods on the app port', function () {
        for (const role of ROLES) {
          const svc = one(all, 'Service', `axid-${role}`);
          const pods = one(all, 'Deployment', `axid-${role}`).spec.template as Obj;
          expect(svc.spec.selector).to.deep.include({ 'app.kubernetes.io/component': role });
          expect(matchesSelector(pods.metadata.labels, { matchLabels: svc.spec.selector }), `${role} Service selects its pods`).to.equal(true);
          const others = byKind(all, 'Deployment').filter((d) => d.metadata.name !== `axid-${role}`);
          for (const d of others) {
            expect(matchesSelector(d.spec.template.metadata.labels, { matchLabels: svc.spec.selector }), `${role} Service ignores ${id(d)}`).to.equal(false);
          }
          const port = (svc.spec.ports as Obj[]).find((p) => p.name === 'http');
          expect(port, `${role} Service port "http"`).to.not.equal(undefined);
          expect(['http', APP_PORT]).to.include(port?.targetPort);
        }
      });

      it('routes /api/v1/stream to the gateway without buffering, everything else to the api', function () {
        const ingresses = byKind(all, 'Ingress');
        const routes: { ing: Obj; path: string; pathType: string; service: string; port: Obj }[] = [];
        for (const ing of ingresses) {
          expect(ing.apiVersion).to.equal('networking.k8s.io/v1');
          expect(ing.spec.ingressClassName, `${id(ing)} class`).to.equal('nginx');
          for (const rule of (ing.spec.rules as Obj[]) ?? []) {
            for (const p of (rule.http?.paths as Obj[]) ?? []) {
              routes.push({ ing, path: p.path, pathType: p.pathType, service: p.backend?.service?.name, port: p.backend?.service?.port ?? {} });
            }
          }
        }
        const stream = routes.filter((r) => r.path === '/api/v1/stream');
        expect(stream, 'a route for /api/v1/stream').to.have.length.greaterThan(0);
        for (const r of stream) {
          expect(['Exact', 'Prefix']).to.include(r.pathType);
          expect(r.service).to.equal('axid-gateway');
          const a = (r.ing.metadata.annotations as Record<string, string> | undefined) ?? {};
          expect(a['nginx.ingress.kubernetes.io/proxy-buffering']).to.equal('off');
          expect(Number(a['nginx.ingress.kubernetes.io/proxy-read-timeout'])).to.be.at.least(3600);
          expect(Number(a['nginx.ingress.kubernetes.io/proxy-send-timeout'])).to.be.at.least(3600);
        }
        const rootRoute = routes.filter((r) => r.path === '/');
        expect(rootRoute, 'a route for /').to.have.length(1);
        expect(rootRoute[0]).to.include({ pathType: 'Prefix', service: 'axid-api' });
        // Uploads of up to 100 MiB (README.md, "Files") pass nginx (its default body limit is 1m).
        const apiAnnotations = (rootRoute[0]?.ing.metadata.annotations as Record<string, string> | undefined) ?? {};
        const body = apiAnnotations['nginx.ingress.kubernetes.io/proxy-body-size'] ?? '1m';
        const m = /^(\d+)([kmg]?)$/i.exec(body);
        const unit: Record<string, number> = { '': 1 / 1048576, k: 1 / 1024, m: 1, g: 1024 };
        const mib = body === '0' ? Infinity : m ? Number(m[1]) * (unit[(m[2] ?? '').toLowerCase()] ?? 0) : 0;
        expect(mib, `proxy-body-size ${body}`).to.be.at.least(100);
        // Every backend is a rendered Service port.
        for (const r of routes) {
          const svc = one(all, 'Service', r.service);
          const ok = (svc.spec.ports as Obj[]).some((p) => p.name === r.port.name || p.port === r.port.number);
          expect(ok, `${id(r.ing)} backend ${r.service} port`).to.equal(true);
        }
      });

      it('autoscales (autoscaling/v2) and protects (PodDisruptionBudget) every tier', function () {
        for (const role of ROLES) {
          const name = `axid-${role}`;
          const hpa = byKind(all, 'HorizontalPodAutoscaler').find((h) => h.spec?.scaleTargetRef?.name === name);
          expect(hpa, `HPA for ${name}`).to.not.equal(undefined);
          expect(hpa?.apiVersion).to.equal('autoscaling/v2');
          expect(hpa?.spec.scaleTargetRef).to.include({ kind: 'Deployment', apiVersion: 'apps/v1' });
          expect(hpa?.spec.minReplicas).to.be.at.least(1);
          expect(hpa?.spec.maxReplicas).to.be.at.least(hpa?.spec.minReplicas as number);
          const cpu = (hpa?.spec.metrics as Obj[]).some((m) => m.type === 'Resource' && m.resource?.name === 'cpu');
          expect(cpu, `${name} scales on CPU`).to.equal(true);
          // The HPA owns the replica count: a fixed one would be reset on every apply.
          expect(one(all, 'Deployment', name).spec.replicas, `${name} leaves replicas to the HPA`).to.equal(undefined);

          const labels = one(all, 'Deployment', name).spec.template.metadata.labels as Record<string, string>;
          const pdbs = byKind(all, 'PodDisruptionBudget').filter((p) => matchesSelector(labels, p.spec.selector));
          expect(pdbs, `one PDB covers ${name}`).to.have.length(1);
          expect(pdbs[0]?.apiVersion).to.equal('policy/v1');
        }
      });

      it('runs the migrations in a Job with the same image and settings', function () {
        const jobs = byKind(all, 'Job').filter((j) => containersOf(j).some((c) => /\bmigrate\b/.test(commandLine(c))));
        expect(jobs, 'one migration Job').to.have.length(1);
        const job = jobs[0] as Obj;
        const c = containersOf(job)[0] as Obj;
        expect(commandLine(c)).to.match(/^(npm run migrate|npx tsx services\/migrate\.ts|node --import tsx services\/migrate\.ts)$/);
        expect(c.image).to.equal(one(all, 'Deployment', 'axid-api').spec.template.spec.containers[0].image);
        expect(job.spec.ttlSecondsAfterFinished, 'ttlSecondsAfterFinished').to.be.a('number');
        expect(['Never', 'OnFailure']).to.include(job.spec.template.spec.restartPolicy);
        const envFrom = (c.envFrom as Obj[] | undefined) ?? [];
        expect(envFrom.some((e) => isNamed(e.secretRef?.name, 'axid-secrets')), 'migration reads axid-secrets').to.equal(true);
        expect(job.spec.template.spec.securityContext?.runAsNonRoot).to.equal(true);
      });

      it('lets the role pods accept traffic on their port only', function () {
        for (const role of ROLES) {
          const labels = one(all, 'Deployment', `axid-${role}`).spec.template.metadata.labels as Record<string, string>;
          const policies = byKind(all, 'NetworkPolicy').filter((p) => matchesSelector(labels, p.spec.podSelector));
          expect(policies.length, `a NetworkPolicy selects axid-${role}`).to.be.greaterThan(0);
          for (const p of policies) {
            expect(p.spec.policyTypes).to.include('Ingress');
            for (const rule of (p.spec.ingress as Obj[] | undefined) ?? []) {
              const ports = (rule.ports as Obj[] | undefined) ?? [];
              expect(ports, `${id(p)} names its ports`).to.have.length.greaterThan(0);
              for (const port of ports) expect([APP_PORT, 'http']).to.include(port.port);
            }
          }
        }
      });

      it('refers only to ConfigMaps and Secrets that exist (axid-secrets and axid-tls excepted in prod)', function () {
        const external = overlay === 'prod' ? new Set(['axid-secrets', 'axid-tls']) : new Set<string>();
        const have = new Set(all.filter((r) => r.kind === 'ConfigMap' || r.kind === 'Secret').map((r) => `${r.kind as string}/${r.metadata.name as string}`));
        const missing: string[] = [];
        const need = (kind: string, name: string | undefined, where: string) => {
          if (name && !external.has(name) && !have.has(`${kind}/${name}`)) missing.push(`${where} -> ${kind}/${name}`);
        };
        for (const r of all.filter((x) => WORKLOAD_KINDS.has(x.kind as string))) {
          for (const c of containersOf(r)) {
            for (const e of (c.envFrom as Obj[] | undefined) ?? []) {
              need('ConfigMap', e.configMapRef?.name, id(r));
              need('Secret', e.secretRef?.name, id(r));
            }
            for (const e of (c.env as Obj[] | undefined) ?? []) {
              need('ConfigMap', e.valueFrom?.configMapKeyRef?.name, id(r));
              need('Secret', e.valueFrom?.secretKeyRef?.name, id(r));
            }
          }
          for (const v of (podTemplate(r)?.spec?.volumes as Obj[] | undefined) ?? []) {
            need('ConfigMap', v.configMap?.name, id(r));
            need('Secret', v.secret?.secretName, id(r));
          }
        }
        for (const ing of byKind(all, 'Ingress')) for (const t of (ing.spec.tls as Obj[] | undefined) ?? []) need('Secret', t.secretName, id(ing));
        expect(missing, missing.join('\n')).to.deep.equal([]);
      });

      if (overlay === 'dev') {
        it('runs Postgres, Redis and MinIO in the cluster, reachable only from Axid pods', function () {
          const workloads = all.filter((r) => WORKLOAD_KINDS.has(r.kind as string));
          const find = (re: RegExp) => workloads.find((w) => containersOf(w).some((c) => re.test(c.image as string)) && w.kind !== 'Job');
          const stores = { postgres: [find(/(^|\/)postgres:16/), 5432], redis: [find(/(^|\/)redis:7/), 6379], minio: [find(/(^|\/)minio\/minio/), 9000] } as const;
          const allowed = new Set(['api', 'gateway', 'worker', 'migrate']);
          for (const [store, [w, port]] of Object.entries(stores)) {
            expect(w, `${store} workload`).to.not.equal(undefined);
            const labels = podTemplate(w as Obj)?.metadata?.labels as Record<string, string>;
            const svc = byKind(all, 'Service').find((s) => matchesSelector(labels, { matchLabels: s.spec.selector }));
            expect(svc, `${store} Service`).to.not.equal(undefined);
            expect((svc?.spec.ports as Obj[]).some((p) => p.port === port), `${store} Service port ${port}`).to.equal(true);
            const policies = byKind(all, 'NetworkPolicy').filter((p) => matchesSelector(labels, p.spec.podSelector));
            expect(policies.length, `${store} has a NetworkPolicy`).to.be.greaterThan(0);
            for (const p of policies) {
              expect(p.spec.policyTypes).to.include('Ingress');
              for (const rule of (p.spec.ingress as Obj[] | undefined) ?? []) {
                expect((rule.ports as Obj[]).map((x) => x.port)).to.deep.equal([port]);
                expect(rule.from, `${id(p)} names its clients`).to.have.length.greaterThan(0);
                for (const from of rule.from as Obj[]) {
                  expect(from.ipBlock, 'no ipBlock').to.equal(undefined);
                  expect(from.namespaceSelector, 'same namespace only').to.equal(undefined);
                  const sel = from.podSelector as Obj;
                  if (sel.matchLabels?.['app.kubernetes.io/name'] === 'minio-init') continue; // the bucket-creating Job
                  expect(sel.matchLabels?.['app.kubernetes.io/name']).to.equal('axid');
                  const comp = (sel.matchExpressions as Obj[] | undefined)?.find((e) => e.key === 'app.kubernetes.io/component');
                  expect(comp?.operator).to.equal('In');
                  for (const v of comp?.values as string[]) expect(allowed.has(v), `component ${v}`).to.equal(true);
                }
              }
            }
            // Every role reaches every store (each one checks the bucket at start).
            for (const role of ROLES) {
              const podLabels = one(all, 'Deployment', `axid-${role}`).spec.template.metadata.labels as Record<string, string>;
              const reach = policies.some((p) => ((p.spec.ingress as Obj[]) ?? []).some((rule) => (rule.from as Obj[]).some((f) => matchesSelector(podLabels, f.podSelector))));
              expect(reach, `axid-${role} reaches ${store}`).to.equal(true);
            }
          }
          const migrateLabels = byKind(all, 'Job').find((j) => j.metadata.name === 'axid-migrate')?.spec.template.metadata.labels;
          const pg = byKind(all, 'NetworkPolicy').find((p) => p.metadata.name === 'axid-postgres') as Obj;
          expect(((pg.spec.ingress as Obj[]) ?? []).some((rule) => (rule.from as Obj[]).some((f) => matchesSelector(migrateLabels, f.podSelector))), 'the migration Job reaches Postgres').to.equal(true);
        });

        it('points the app at the in-cluster stores', function () {
          const secret = byKind(all, 'Secret').find((s) => isNamed(s.metadata.name, 'axid-secrets')) as Obj;
          expect(secret, 'dev axid-secrets').to.not.equal(undefined);
          const env = Object.fromEntries(Object.entries((secret.data as Record<string, string>) ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
          for (const key of Object.keys(env)) expect(KNOWN_ENV.has(key), `Secret key ${key} is a known setting`).to.equal(true);
          const services = new Set(byKind(all, 'Service').map((s) => s.metadata.name as string));
          for (const key of ['DATABASE_URL', 'REDIS_URL', 'S3_ENDPOINT']) {
            expect(env[key], key).to.be.a('string');
            expect(services.has(new URL(env[key] as string).hostname), `${key} names a Service of the overlay`).to.equal(true);
          }
          if (env.BOOTSTRAP_ADMIN_KEY !== undefined) expect(env.BOOTSTRAP_ADMIN_KEY).to.match(/^[A-Za-z0-9_-]{32,128}$/);
        });
      }

      if (overlay === 'prod') {
        it('runs no Postgres, Redis or MinIO and ships no Secret', function () {
          const workloads = all.filter((r) => WORKLOAD_KINDS.has(r.kind as string));
          for (const w of workloads) {
            for (const c of containersOf(w)) expect(isDatastoreImage(c.image as string), `${id(w)} image ${c.image as string}`).to.equal(false);
          }
          expect(byKind(all, 'StatefulSet')).to.deep.equal([]);
          expect(byKind(all, 'PersistentVolumeClaim')).to.deep.equal([]);
          expect(byKind(all, 'Secret').map(id), 'secrets are created by the operator').to.deep.equal([]);
        });

        it('reads connection settings from the operator-made Secret axid-secrets', function () {
          for (const r of all.filter((x) => WORKLOAD_KINDS.has(x.kind as string))) {
            for (const c of containersOf(r)) {
              const names = ((c.envFrom as Obj[] | undefined) ?? []).map((e) => e.secretRef?.name as string | undefined);
              expect(names, `${id(r)} envFrom`).to.include('axid-secrets');
            }
          }
          const prodConfig = byKind(all, 'ConfigMap').find((cm) => isNamed(cm.metadata.name, 'axid-config'));
          expect(prodConfig?.data?.PUBLIC_BASE_URL).to.match(/^https:\/\//);
          for (const ing of byKind(all, 'Ingress')) {
            expect(ing.spec.tls, `${id(ing)} TLS`).to.have.length.greaterThan(0);
            expect(ing.spec.rules[0].host, `${id(ing)} host`).to.be.a('string');
          }
        });

        it('includes the monitoring component: a ServiceMonitor on every role\'s metrics port and the alert rules', function () {
          const monitor = one(all, 'ServiceMonitor', 'axid');
          for (const role of ROLES) {
            const svc = one(all, 'Service', `axid-${role}`);
            expect(matchesSelector(svc.metadata.labels, monitor.spec.selector), `the ServiceMonitor selects ${id(svc)}`).to.equal(true);
            for (const endpoint of monitor.spec.endpoints as Obj[]) {
              expect((svc.spec.ports as Obj[]).map((p) => p.name), `${id(svc)} has the port ${endpoint.port as string}`).to.include(endpoint.port);
              expect(endpoint.path).to.equal('/metrics');
            }
          }
          const rules = parse(readFileSync(join(ROOT, 'infra/prometheus/rules.yaml'), 'utf8')) as Obj;
          expect(one(all, 'PrometheusRule', 'axid').spec).to.deep.equal(rules);
        });

      }
    });
  }
});

// ------------------------------------------------------------- components --

/** Renders the base with `components` (k8s/components/<name>) through a kustomization in a temporary folder of the repository. */
function renderWithComponents(components: string[]): Obj[] {
  const render = kustomizeRenderer();
  if (!render) throw new Error('rendering needs kubectl (kubectl kustomize) or kustomize on PATH');
  const dir = mkdtempSync(join(ROOT, 'k8s', '.components-test-'));
  try {
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: axid\nresources:\n  - ../base\ncomponents:\n${components.map((c) => `  - ../components/${c}\n`).join('')}`,
    );
    return parseDocs(render(dir), dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('k8s components', function () {
  this.timeout(60_000);

  it('has the monitoring and gateway-streams-hpa components', function () {
    expect(readdirSync(COMPONENTS_DIR).sort()).to.deep.equal(['gateway-streams-hpa', 'monitoring']);
  });

  it('scales the gateway on open streams per pod (a Pods metric the adapter rule exposes) beside CPU', function () {
    const all = renderWithComponents(['monitoring', 'gateway-streams-hpa']);
    for (const r of all) {
      const Model = modelFor(r.apiVersion as string, r.kind as string);
      expect(Model, `${id(r)} has a schema`).to.not.equal(undefined);
      new Model!(normalizeForSchema(r)).validate();
    }
    const hpa = one(all, 'HorizontalPodAutoscaler', 'axid-gateway');
    const metrics = hpa.spec.metrics as Obj[];
    expect(metrics.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu'), 'still on CPU').to.equal(true);
    const streams = metrics.find((m) => m.type === 'Pods');
    expect(streams?.pods.metric.name).to.equal('axid_sse_connections');
    expect(streams?.pods.target.type).to.equal('AverageValue');
    // The other tiers keep their metrics.
    expect((one(all, 'HorizontalPodAutoscaler', 'axid-api').spec.metrics as Obj[]).map((m) => m.type)).to.deep.equal(['Resource']);
    // prometheus-adapter's rule names the same metric, per pod, from the series the ServiceMonitor scrapes.
    const adapter = parse(readFileSync(join(ROOT, 'infra/prometheus/adapter-rules.yaml'), 'utf8')) as Obj;
    const rule = (adapter.rules.custom as Obj[]).find((r) => r.name?.as === 'axid_sse_connections');
    expect(rule?.seriesQuery).to.match(/^axid_sse_connections\{/);
    expect(rule?.resources.overrides.pod.resource).to.equal('pod');
  });
});

// ------------------------------------------- image, compose, example Secret --

describe('container image, compose file and example Secret (static)', function () {
  const dockerfile = readFileSync(join(ROOT, 'infra', 'Dockerfile'), 'utf8');
  // Instructions, with line continuations joined and comments dropped.
  const instructions = dockerfile
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages: string[][] = [];
  for (const line of instructions) {
    if (/^FROM\s/i.test(line)) stages.push([]);
    stages[stages.length - 1]?.push(line);
  }

  it('builds in several stages from Node 20 and runs as a non-root user', function () {
    expect(stages.length, 'FROM stages').to.be.at.least(2);
    const args = Object.fromEntries(
      instructions.filter((l) => /^ARG\s/i.test(l)).map((l) => {
        const [k, v] = l.replace(/^ARG\s+/i, '').split('=');
        return [k, v ?? ''];
      }),
    );
    for (const stage of stages) {
      const image = (stage[0] as string).split(/\s+/)[1] as string;
      const resolved = image.replace(/\$\{?(\w+)\}?/g, (_m, name: string) => (args[name] as string | undefined) ?? '');
      if (!/^(build|deps|prod-deps|base)$/i.test(resolved)) expect(resolved).to.match(/^node:20([.-]|$)/);
    }
    const final = stages[stages.length - 1] as string[];
    const users = final.filter((l) => /^USER\s/i.test(l)).map((l) => l.split(/\s+/)[1] as string);
    expect(users.length, 'USER in the final stage').to.be.greaterThan(0);
    expect(users[users.length - 1]).to.not.match(/^(root|0)(:|$)/);
    expect(final.join('\n')).to.match(/^ENV\s.*NODE_ENV=production/m);
    expect(final.join('\n'), 'the image never falls back to embedded stand-ins').to.match(/^ENV\s.*\bEMBEDDED=off\b/m);
    expect(final.join('\n')).to.match(/^EXPOSE\s+3000\b/m);
    const cmd = final.filter((l) => /^CMD\s/i.test(l)).pop() as string;
    const argv = JSON.parse(cmd.replace(/^CMD\s+/i, '')) as string[];
    expect([['node', '--import', 'tsx', 'services/main.ts'], ['npx', 'tsx', 'services/main.ts'], ['npm', 'start']]).to.deep.include(argv);
  });

  it('installs with npm ci after copying every workspace manifest, then prunes dev dependencies', function () {
    const text = instructions.join('\n');
    const ci = instructions.findIndex((l) => /^RUN\s.*\bnpm ci\b/.test(l));
    const prune = instructions.findIndex((l) => /^RUN\s.*\bnpm prune --omit=dev\b/.test(l));
    expect(ci, 'npm ci').to.be.greaterThan(-1);
    expect(prune, 'npm prune --omit=dev after npm ci').to.be.greaterThan(ci);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces?: string[] };
    for (const ws of ['.', ...(pkg.workspaces ?? [])]) {
      const file = ws === '.' ? 'package.json' : `${ws}/package.json`;
      const at = instructions.findIndex((l) => /^COPY\s/i.test(l) && l.split(/\s+/).slice(1, -1).includes(file));
      expect(at, `COPY ${file} before npm ci`).to.be.greaterThan(-1);
      expect(at).to.be.lessThan(ci);
    }
    expect(text).to.match(/^COPY\s.*package-lock\.json/m);
  });

  it('keeps dependencies, data and VCS files out of the build context', function () {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(ignored).to.include.members(['node_modules', '.git', '.data']);
  });

  it('documents the prod Secret in secret.example.yaml, which the prod kustomization does not apply', function () {
    const dir = join(OVERLAYS_DIR, 'prod');
    const docs = parseDocs(readFileSync(join(dir, 'secret.example.yaml'), 'utf8'), 'secret.example.yaml');
    expect(docs).to.have.length(1);
    const secret = docs[0] as Obj;
    expect(secret).to.include({ apiVersion: 'v1', kind: 'Secret' });
    expect(secret.metadata.name).to.equal('axid-secrets');
    const Model = modelFor('v1', 'Secret') as ModelClass;
    new Model(secret).validate();
    const keys = Object.keys(secret.stringData as Obj);
    expect(keys).to.include.members(['DATABASE_URL', 'REDIS_URL', 'S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']);
    for (const key of keys) expect(KNOWN_ENV.has(key), `key ${key}`).to.equal(true);
    const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Obj;
    expect(secret.metadata.namespace, 'the overlay namespace').to.equal(kustomization.namespace);
    const listed = JSON.stringify([kustomization.resources, kustomization.components, kustomization.patches, kustomization.generators]);
    expect(listed).to.not.include('secret.example');
  });

  it('composes Postgres, Redis, MinIO, a migration and the three roles from one image', function () {
    const compose = parse(readFileSync(join(ROOT, 'infra', 'docker-compose.yml'), 'utf8'), { merge: true }) as Obj;
    const services = compose.services as Record<string, Obj>;
    expect(services.postgres?.image).to.match(/^postgres:16/);
    expect(services.redis?.image).to.match(/^redis:7/);
    expect(services.minio?.image).to.match(/minio\/minio/);
    expect(Object.values(services).some((s) => /minio\/mc/.test(s.image as string)), 'a bucket-creating mc service').to.equal(true);
    const migrate = services.migrate as Obj;
    expect([migrate.command].flat().join(' ')).to.equal('npm run migrate');
    for (const role of ROLES) {
      const s = services[role] as Obj;
      expect(s, `service ${role}`).to.not.equal(undefined);
      expect(s.image, `${role} image`).to.equal(migrate.image);
      expect(s.environment?.ROLES).to.equal(role);
      for (const key of ['DATABASE_URL', 'REDIS_URL', 'S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) {
        expect(s.environment?.[key], `${role} ${key}`).to.be.a('string').and.not.equal('');
      }
      expect(s.environment?.EMBEDDED, `${role} EMBEDDED`).to.equal('off');
      expect(s.depends_on?.migrate?.condition).to.equal('service_completed_successfully');
      for (const key of Object.keys(s.environment as Obj)) expect(KNOWN_ENV.has(key), `${role} env ${key}`).to.equal(true);
    }
    const published = (name: string) => ((services[name]?.ports as string[] | undefined) ?? []).map((p) => String(p).split(':')[0]);
    expect(published('api')).to.include('3000');
    expect(published('gateway')).to.include('3001');
  });
});

// deploy/kubernetes: the production overlay is rendered here as `kubectl apply -k` would (the subset
// of kustomize the files use: resources, labels, namespace, images, patches; any other field fails
// the render rather than being ignored), then every document is validated offline against
// Kubernetes' own API schemas, two ways:
// - kubernetes-models' validators, compiled from Kubernetes' OpenAPI document (types, formats,
//   required fields, enums);
// - strictly: each document is type-checked as an object literal of its kind's interface (from the
//   same OpenAPI document), so a field Kubernetes does not know (a misspelt `readinessProbes`) fails,
//   as `kubectl apply --validate=strict` would.
// Then the manifests are held to the service: declared settings only, every required one given (the
// ConfigMap loads through the service's own settings loader), probes on /health and /ready, a stop
// whose pause outlasts the endpoint's removal and whose grace period covers the pause and the drain,
// a locked-down pod, migrations in an init container running what the image holds, a second release
// (a new image) that changes no field Kubernetes refuses to change, a NetworkPolicy that allows the
// service's port in and its dependencies out and nothing else, and instances spread over nodes and
// zones.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type Config, loadConfig, projectRoot, SETTING_NAMES, SETTINGS, type SettingDeclaration } from '../src/config/index.ts';
import { bundleOptions } from '../scripts/build.mjs';
import { testSettings } from './support/app.ts';

type Doc = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};
type Json = Record<string, unknown>;

const KUBERNETES_DIR = path.join(projectRoot, 'deploy/kubernetes');
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PersistentVolume', 'StorageClass']);
const KUSTOMIZATION_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'labels', 'namespace', 'images', 'patches']);

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Strategic merge as kustomize does it for these kinds: objects merge, lists of named items merge by name, the rest is replaced. */
function merge(base: unknown, patch: unknown): unknown {
  if (isObject(base) && isObject(patch)) {
    const out: Json = { ...base };
    for (const [key, value] of Object.entries(patch)) out[key] = key in base ? merge(base[key], value) : value;
    return out;
  }
  if (Array.isArray(base) && Array.isArray(patch) && [...base, ...patch].every((item) => isObject(item) && typeof item.name === 'string')) {
    const out = [...base] as Json[];
    for (const item of patch as Json[]) {
      const at = out.findIndex((existing) => existing.name === item.name);
      if (at >= 0) out[at] = merge(out[at], item) as Json;
      else out.push(item);
    }
    return out;
  }
  return patch;
}

function yamlDocuments(file: string): Doc[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((document) => {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
    return document.toJS() as Doc;
  });
}

interface ImageEdit {
  name: string;
  digest: string;
}

/**
 * `kubectl kustomize <dir>` for the features the files use; `setImage` is the release pipeline's
 * `kustomize edit set image <name>@<digest>` on the overlay.
 */
function render(dir: string, setImage?: ImageEdit): Doc[] {
  const [kustomization] = yamlDocuments(path.join(dir, 'kustomization.yaml')) as unknown as Json[];
  const unknown = Object.keys(kustomization!).filter((field) => !KUSTOMIZATION_FIELDS.has(field));
  if (unknown.length > 0) throw new Error(`${dir}/kustomization.yaml uses ${unknown.join(', ')}, which this renderer does not implement`);
  let docs: Doc[] = ((kustomization!.resources as string[] | undefined) ?? []).flatMap((resource) => {
    const target = path.join(dir, resource);
    return statSync(target).isDirectory() ? render(target) : yamlDocuments(target);
  });
  for (const patchEntry of (kustomization!.patches as { path: string }[] | undefined) ?? []) {
    for (const patch of yamlDocuments(path.join(dir, patchEntry.path))) {
      const at = docs.findIndex((doc) => doc.kind === patch.kind && doc.metadata.name === patch.metadata.name);
      if (at < 0) throw new Error(`${patchEntry.path}: no ${patch.kind} ${patch.metadata.name} to patch`);
      docs[at] = merge(docs[at], patch) as Doc;
    }
  }
  for (const { pairs, includeSelectors } of (kustomization!.labels as
    | { pairs: Record<string, string>; includeSelectors?: boolean }[]
    | undefined) ?? []) {
    if (includeSelectors) throw new Error('labels with includeSelectors are not implemented here');
    docs = docs.map((doc) => ({ ...doc, metadata: { ...doc.metadata, labels: { ...doc.metadata.labels, ...pairs } } }));
  }
  const namespace = kustomization!.namespace as string | undefined;
  if (namespace) docs = docs.map((doc) => (CLUSTER_SCOPED.has(doc.kind) ? doc : { ...doc, metadata: { ...doc.metadata, namespace } }));
  const images = ((kustomization!.images as { name: string; newName?: string; newTag?: string; digest?: string }[] | undefined) ?? []).map(
    (image) => (setImage && image.name === setImage.name ? { ...image, newTag: undefined, digest: setImage.digest } : image),
  );
  for (const image of images) {
    const reference = `${image.newName ?? image.name}${image.digest ? `@${image.digest}` : image.newTag ? `:${image.newTag}` : ''}`;
    docs = JSON.parse(JSON.stringify(docs), (key, value: unknown) =>
      key === 'image' && value === image.name ? reference : value,
    ) as Doc[];
  }
  return docs;
}

/** The module of kubernetes-models holding a kind: `apps/v1` + `Deployment`, or `v1` + `Service` for the core group. */
const modelModule = (doc: Doc): string => `kubernetes-models/${doc.apiVersion}/${doc.kind}`;

const rendered = render(path.join(KUBERNETES_DIR, 'production'));
const ofKind = <T = Json>(kind: string): (Doc & T)[] => rendered.filter((doc) => doc.kind === kind) as (Doc & T)[];

interface Probe {
  httpGet?: { path: string; port: string };
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Json;
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
}
interface TopologySpreadConstraint {
  topologyKey: string;
  maxSkew: number;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: { matchLabels?: Record<string, string> };
  matchLabelKeys?: string[];
}
interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
  securityContext?: Json;
  terminationGracePeriodSeconds?: number;
  topologySpreadConstraints?: TopologySpreadConstraint[];
}
interface DeploymentDoc {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    strategy: { rollingUpdate: { maxSurge: number; maxUnavailable: number } };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
/** Every container of a pod, its init containers first (they run the same image, with the same settings). */
const everyContainer = (pod: PodSpec): Container[] => [...(pod.initContainers ?? []), ...pod.containers];
const podSpecs = (): [string, PodSpec][] =>
  rendered.flatMap((doc) => {
    const template = (doc.spec as { template?: { spec: PodSpec } } | undefined)?.template;
    return template ? [[`${doc.kind} ${doc.metadata.name}`, template.spec] as [string, PodSpec]] : [];
  });

/**
 * Seconds kube-proxy and an ingress controller take, with room, to act on an endpoint's removal
 * from the Service (each reprograms within about a second of the EndpointSlice change; the room is
 * for a loaded control plane).
 */
const ENDPOINT_REMOVAL_MARGIN_SECONDS = 5;

/**
 * The ConfigMap as the service reads it, through its own settings loader (so an invalid value fails
 * here as it would at start), with stand-ins for the Secret's values, which the repository leaves empty.
 */
function manifestsConfig(): Config {
  const [configMap] = ofKind<{ data: Record<string, string> }>('ConfigMap');
  return loadConfig({
    ...configMap!.data,
    DATABASE_URL: 'postgresql://gateway@postgres:5432/dealership',
    REDIS_URL: 'redis://redis:6379',
    SESSION_SIGNING_SECRET: testSettings.SESSION_SIGNING_SECRET,
    SECRETS_ENCRYPTION_KEYS: testSettings.SECRETS_ENCRYPTION_KEYS,
    METRICS_TOKEN: '0123456789abcdef0123456789abcdef',
  });
}

/**
 * The fields Kubernetes refuses to change once a document of the kind exists (an apply that changes
 * one fails), by kind, as dotted paths. A kind not listed fails the check: add it with its fields.
 */
const IMMUTABLE_FIELDS: Record<string, (doc: Doc) => string[]> = {
  Deployment: () => ['spec.selector'],
  Job: () => ['spec.template', 'spec.selector'],
  Service: () => ['spec.clusterIP'],
  ConfigMap: (doc) => (doc.immutable === true ? ['data', 'binaryData'] : []),
  Secret: (doc) => (doc.immutable === true ? ['data', 'stringData'] : []),
  PodDisruptionBudget: () => [],
  HorizontalPodAutoscaler: () => [],
  NetworkPolicy: () => [],
};

/** `<kind> <name>: <field>` for every immutable field a second apply of `after` would change in a document of `before`. */
function immutableChanges(before: Doc[], after: Doc[]): string[] {
  const at = (doc: Doc, field: string): unknown =>
    field.split('.').reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), doc);
  return after.flatMap((doc) => {
    const fields = IMMUTABLE_FIELDS[doc.kind];
    if (!fields) return [`${doc.kind} ${doc.metadata.name}: a kind IMMUTABLE_FIELDS does not know`];
    const existing = before.find((candidate) => candidate.kind === doc.kind && candidate.metadata.name === doc.metadata.name);
    if (!existing) return [];
    return fields(existing)
      .filter((field) => JSON.stringify(at(existing, field)) !== JSON.stringify(at(doc, field)))
      .map((field) => `${doc.kind} ${doc.metadata.name}: ${field}`);
  });
}

interface NetworkPolicyPeer {
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}
interface NetworkPolicyDoc {
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: string[];
    ingress: { from?: NetworkPolicyPeer[]; ports?: { port: number | string; protocol: string }[] }[];
    egress: { to?: NetworkPolicyPeer[]; ports?: { port: number | string; protocol: string }[] }[];
  };
}

describe('deploy/kubernetes, production overlay', () => {
  it('renders the Deployment, Service, PodDisruptionBudget, HorizontalPodAutoscaler, NetworkPolicy, ConfigMap and Secret, in one namespace', () => {
    expect(rendered.map((doc) => `${doc.apiVersion} ${doc.kind}`).sort()).toEqual(
      [
        'apps/v1 Deployment',
        'autoscaling/v2 HorizontalPodAutoscaler',
        'networking.k8s.io/v1 NetworkPolicy',
        'policy/v1 PodDisruptionBudget',
        'v1 ConfigMap',
        'v1 Secret',
        'v1 Service',
      ].sort(),
    );
    expect(new Set(rendered.map((doc) => doc.metadata.namespace))).toEqual(new Set(['dealership']));
  });

  it("is valid against Kubernetes' schemas (kubernetes-models' validators from its OpenAPI document), every document", async () => {
    for (const doc of rendered) {
      const loaded = (await import(modelModule(doc))) as Record<string, new (data: Doc) => { validate(): void }>;
      const Model = loaded[doc.kind]!;
      expect(() => new Model(doc).validate(), `${doc.kind} ${doc.metadata.name}`).not.toThrow();
    }
  });

  it('has no field Kubernetes does not know, in any document (each type-checked strictly as its kind)', () => {
    const sources = new Map(
      rendered.map((doc, index) => [
        path.join(projectRoot, 'test', `__kubernetes_manifest_${index}.ts`),
        `import type { I${doc.kind} } from '${modelModule(doc)}';\nexport const manifest: I${doc.kind} = ${JSON.stringify(doc, null, 2)};\n`,
      ]),
    );
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: [],
    };
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.fileExists = (file) => sources.has(file) || ts.sys.fileExists(file);
    host.readFile = (file) => sources.get(file) ?? readFile(file);
    host.getSourceFile = (file, language) =>
      sources.has(file) ? ts.createSourceFile(file, sources.get(file)!, language) : getSourceFile(file, language);
    const program = ts.createProgram([...sources.keys()], options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(problems).toEqual([]);

    // The check is real: an unknown field, and a field of the wrong kind, are refused.
    const misspelt = ts.createProgram(
      [path.join(projectRoot, 'test', '__kubernetes_manifest_misspelt.ts')],
      options,
      Object.assign(host, {
        getSourceFile: (file: string, language: ts.ScriptTarget) =>
          file.endsWith('__kubernetes_manifest_misspelt.ts')
            ? ts.createSourceFile(
                file,
                `import type { IService } from 'kubernetes-models/v1/Service';\nexport const manifest: IService = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x' }, spec: { prots: [] } };\n`,
                language,
              )
            : getSourceFile(file, language),
        fileExists: (file: string) => file.endsWith('__kubernetes_manifest_misspelt.ts') || ts.sys.fileExists(file),
      }),
    );
    expect(
      ts
        .getPreEmitDiagnostics(misspelt)
        .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
        .join('\n'),
    ).toMatch(/'prots' does not exist/);
  }, 180_000);

  it('sets only declared settings, every required one, and keeps the secrets in the Secret with no value', () => {
    const [configMap] = ofKind<{ data: Record<string, string> }>('ConfigMap');
    const [secret] = ofKind<{ stringData: Record<string, string> }>('Secret');
    const names = [...Object.keys(configMap!.data), ...Object.keys(secret!.stringData)];
    expect(names.filter((name) => !(SETTING_NAMES as string[]).includes(name))).toEqual([]);
    const required = SETTING_NAMES.filter((name) => (SETTINGS[name] as SettingDeclaration).required !== undefined);
    expect(names).toEqual(expect.arrayContaining([...required, 'DATABASE_URL', 'NODE_ENV']));
    // Every confidential setting given is in the Secret, never in the ConfigMap, and no value is written down.
    for (const name of Object.keys(configMap!.data))
      expect((SETTINGS[name as keyof typeof SETTINGS] as SettingDeclaration).confidential, name).toBeUndefined();
    expect(Object.values(secret!.stringData).every((value) => value === '')).toBe(true);
    expect(configMap!.data.NODE_ENV).toBe('production');
    for (const [, pod] of podSpecs()) {
      for (const container of everyContainer(pod)) {
        expect(container.envFrom, container.name).toEqual([
          { configMapRef: { name: configMap!.metadata.name } },
          { secretRef: { name: secret!.metadata.name } },
        ]);
      }
    }
  });

  it('probes /health (startup, liveness) and /ready (readiness), on the port the service listens on', () => {
    const [configMap] = ofKind<{ data: Record<string, string> }>('ConfigMap');
    const [deployment] = ofKind<{ spec: { template: { spec: PodSpec } } }>('Deployment');
    const gateway = deployment!.spec.template.spec.containers[0]!;
    expect(gateway.ports).toEqual([{ name: 'http', containerPort: Number(configMap!.data.PORT), protocol: 'TCP' }]);
    expect(gateway.startupProbe?.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(gateway.livenessProbe?.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(gateway.readinessProbe?.httpGet).toEqual({ path: '/ready', port: 'http' });
  });

  it('pauses a stop until the endpoint has left the Service, and gives it time for the pause and the drain together', () => {
    const [deployment] = ofKind<DeploymentDoc>('Deployment');
    const pod = deployment!.spec.template.spec;
    const gateway = pod.containers.find((container) => container.name === 'gateway')!;
    // Kubernetes' own sleep action: the pause needs no shell and no binary in the image.
    expect(gateway.lifecycle?.preStop?.exec).toBeUndefined();
    const pauseSeconds = gateway.lifecycle?.preStop?.sleep?.seconds ?? 0;
    const readiness = gateway.readinessProbe!;
    expect(readiness.timeoutSeconds).toBeLessThanOrEqual(readiness.periodSeconds!);
    const readinessVerdictSeconds = readiness.periodSeconds! * readiness.failureThreshold!;
    // SIGTERM comes after the pause, and the drain refuses new connections from its first moment: the
    // pause must outlast one readiness verdict plus the time an endpoint's removal takes to reach
    // kube-proxy and the ingress controller.
    expect(pauseSeconds).toBeGreaterThanOrEqual(readinessVerdictSeconds + ENDPOINT_REMOVAL_MARGIN_SECONDS);
    // The grace period runs from the deletion, the pause included; the service exits by itself
    // within SHUTDOWN_GRACE_MS of SIGTERM, read here as the service reads the ConfigMap.
    const drainSeconds = manifestsConfig().shutdownGraceMs / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(pauseSeconds + drainSeconds);
  });

  it("runs every pod as a non-root user, on a read-only root file system, with no capability and the runtime's seccomp profile, with requests and limits", () => {
    expect(podSpecs().map(([name]) => name)).toEqual(['Deployment dealership-gateway']);
    for (const [name, pod] of podSpecs()) {
      expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.securityContext?.runAsUser, name).not.toBe(0);
      for (const container of everyContainer(pod)) {
        const where = `${name}, ${container.name}`;
        expect(container.securityContext, where).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(Object.keys(container.resources?.requests ?? {}).sort(), where).toEqual(['cpu', 'memory']);
        expect(Object.keys(container.resources?.limits ?? {}).sort(), where).toEqual(['cpu', 'memory']);
        // The release's image, by digest.
        expect(container.image, where).toMatch(/@sha256:[0-9a-f]{64}$/);
      }
    }
  });

  it('migrates in an init container of each new pod, with the bundled runner the image holds, and scales between the PodDisruptionBudget and the connection budget', () => {
    const [deployment] = ofKind<DeploymentDoc>('Deployment');
    const pod = deployment!.spec.template.spec;
    expect(pod.initContainers?.map((container) => container.name)).toEqual(['migrate']);
    const migrate = pod.initContainers![0]!;
    // The release's image, the same as the service's.
    expect(migrate.image).toBe(pod.containers[0]!.image);
    // scripts/build.mjs bundles scripts/migrate.ts as dist/src/migrate.js beside the service.
    expect(migrate.command).toEqual(['node', 'dist/src/migrate.js']);
    expect((bundleOptions('dist/src').entryPoints as Record<string, string>).migrate).toBe('scripts/migrate.ts');
    const [hpa] = ofKind<{ spec: { minReplicas: number; maxReplicas: number; scaleTargetRef: { kind: string; name: string } } }>(
      'HorizontalPodAutoscaler',
    );
    expect(hpa!.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment!.metadata.name });
    // The autoscaler owns the count: a replicas field would reset it at every apply.
    expect(deployment!.spec.replicas).toBeUndefined();
    expect(hpa!.spec.minReplicas).toBeGreaterThanOrEqual(3);
    // A rollout adds one pod before it takes an old one away: the old pods serve until a migrated new one is ready.
    expect(deployment!.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    // At most maxReplicas + the surge pod, each with its pool (the init container's one connection is
    // closed before its pod opens the pool), within PostgreSQL's default max_connections (100) less
    // about 20 kept for administration (docs/operations.md, "Several instances").
    const poolMax = manifestsConfig().databasePoolMax;
    expect((hpa!.spec.maxReplicas + deployment!.spec.strategy.rollingUpdate.maxSurge) * poolMax).toBeLessThanOrEqual(80);
    const [budget] = ofKind<{ spec: { maxUnavailable: number } }>('PodDisruptionBudget');
    expect(budget!.spec.maxUnavailable).toBeLessThan(hpa!.spec.minReplicas);
  });

  it('takes a second release (`kustomize edit set image` to a new digest, then `kubectl apply -k`) with no change to a field Kubernetes holds immutable, in any document', () => {
    const release = (digit: string) =>
      render(path.join(KUBERNETES_DIR, 'production'), { name: 'dealership-gateway', digest: `sha256:${digit.repeat(64)}` });
    const [first, second] = [release('a'), release('b')];
    expect(immutableChanges(first, second)).toEqual([]);
    // The new image did reach every container of every pod.
    for (const [before, after] of first.map((doc, index) => [doc, second[index]!] as const)) {
      const template = (doc: Doc) => (doc.spec as { template?: { spec: PodSpec } } | undefined)?.template?.spec;
      for (const container of everyContainer(template(after) ?? { containers: [] }))
        expect(container.image, after.kind).toMatch(/@sha256:b{64}$/);
      if (template(before)) expect(JSON.stringify(template(before))).toMatch(/@sha256:a{64}/);
    }
    // The check is real: a Job of a fixed name, whose template holds the image, is refused the second release.
    const job = (digit: string): Doc => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'dealership-gateway-migrate' },
      spec: { template: { spec: { containers: [{ name: 'migrate', image: `gateway@sha256:${digit.repeat(64)}` }] } } },
    });
    expect(immutableChanges([job('a')], [job('b')])).toEqual(['Job dealership-gateway-migrate: spec.template']);
  });
});

describe('deploy/kubernetes, NetworkPolicy', () => {
  const [policy] = ofKind<NetworkPolicyDoc>('NetworkPolicy');
  const [deployment] = ofKind<DeploymentDoc>('Deployment');

  it("selects the service's pods and limits both directions", () => {
    expect(policy!.spec.podSelector).toEqual({ matchLabels: deployment!.spec.selector.matchLabels });
    expect(policy!.spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
  });

  it("lets in only the service's port, from the ingress controller's namespace, Prometheus' and its own", () => {
    const [service] = ofKind<{ spec: { ports: { targetPort: string }[] } }>('Service');
    const gateway = deployment!.spec.template.spec.containers[0]!;
    expect(policy!.spec.ingress).toHaveLength(1);
    const [rule] = policy!.spec.ingress;
    // The port the Service sends to, by the container port's name.
    expect(rule!.ports).toEqual([{ port: service!.spec.ports[0]!.targetPort, protocol: 'TCP' }]);
    expect(gateway.ports!.map((port) => port.name)).toContain(rule!.ports![0]!.port);
    expect(rule!.from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress' } } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } } },
      { podSelector: {} },
    ]);
  });

  it('lets out only DNS, PostgreSQL, Redis, the OTLP collector of the settings, SMTP, and HTTPS to public addresses (webhook receivers)', () => {
    const egress = policy!.spec.egress;
    // Every rule names its ports: none opens every port.
    for (const rule of egress) expect(rule.ports?.length, JSON.stringify(rule)).toBeGreaterThan(0);
    const allowed = egress.flatMap((rule) => rule.ports!.map((port) => `${port.protocol} ${port.port}`)).sort();
    expect(allowed).toEqual(['TCP 443', 'TCP 4318', 'TCP 465', 'TCP 53', 'TCP 5432', 'TCP 587', 'TCP 6379', 'UDP 53'].sort());
    const ruleFor = (port: number) => egress.find((rule) => rule.ports!.some((allowedPort) => allowedPort.port === port))!;

    // DNS: the cluster's resolver only.
    expect(ruleFor(53).to).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      },
    ]);
    // OTLP: the port and namespace of the collector the ConfigMap names (`<service>.<namespace>`).
    const otlp = new URL(manifestsConfig().tracing!.otlpUrl!);
    const otlpRule = ruleFor(Number(otlp.port));
    expect(otlpRule.ports).toEqual([{ port: Number(otlp.port), protocol: 'TCP' }]);
    expect(otlpRule.to).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': otlp.hostname.split('.')[1] } } }]);

    // Only HTTPS reaches the internet, and not the private, loopback, shared or link-local ranges
    // (the cloud's metadata service is link-local).
    const open = egress.filter((rule) => rule.to?.some((peer) => peer.ipBlock) ?? false);
    expect(open).toHaveLength(1);
    expect(open[0]!.ports).toEqual([{ port: 443, protocol: 'TCP' }]);
    const blocks = Object.fromEntries(open[0]!.to!.map((peer) => [peer.ipBlock!.cidr, peer.ipBlock!.except ?? []]));
    expect(Object.keys(blocks).sort()).toEqual(['0.0.0.0/0', '::/0']);
    expect(blocks['0.0.0.0/0']).toEqual(
      expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16']),
    );
    expect(blocks['::/0']).toEqual(expect.arrayContaining(['fc00::/7', 'fe80::/10', '::1/128']));
    // The rules with no destination (database, Redis, SMTP: anywhere, since each may be outside the cluster) name their ports only.
    for (const rule of egress.filter((candidate) => candidate.to === undefined))
      expect(rule.ports!.map((port) => port.port).every((port) => [5432, 6379, 587, 465].includes(Number(port)))).toBe(true);
  });
});

describe('deploy/kubernetes, where the instances run', () => {
  const [deployment] = ofKind<DeploymentDoc>('Deployment');
  const constraints = deployment!.spec.template.spec.topologySpreadConstraints ?? [];

  it.each([
    ['kubernetes.io/hostname', 'DoNotSchedule'],
    ['topology.kubernetes.io/zone', 'ScheduleAnyway'],
  ] as const)(
    'spreads the instances over %s (%s), one apart at most, counting the pods of the same ReplicaSet',
    (topologyKey, whenUnsatisfiable) => {
      const constraint = constraints.find((candidate) => candidate.topologyKey === topologyKey);
      expect(constraint, topologyKey).toMatchObject({ maxSkew: 1, whenUnsatisfiable, matchLabelKeys: ['pod-template-hash'] });
      // It counts the Deployment's own pods: the selector's labels, which the pod template carries.
      expect(constraint!.labelSelector).toEqual({ matchLabels: deployment!.spec.selector.matchLabels });
      expect(deployment!.spec.template.metadata.labels).toMatchObject(deployment!.spec.selector.matchLabels);
    },
  );
});

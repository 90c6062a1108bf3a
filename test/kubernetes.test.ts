// deploy/kubernetes: the production overlay is rendered here as `kubectl apply -k` would (the subset
// of kustomize the files use: resources, labels, namespace, images, patches; any other field fails
// the render rather than being ignored), then every document is validated offline against
// Kubernetes' own API schemas, two ways:
// - kubernetes-models' validators, compiled from Kubernetes' OpenAPI document (types, formats,
//   required fields, enums);
// - strictly: each document is type-checked as an object literal of its kind's interface (from the
//   same OpenAPI document), so a field Kubernetes does not know (a misspelt `readinessProbes`) fails,
//   as `kubectl apply --validate=strict` would.
// Then the manifests are held to the service: declared settings only, every required one given,
// probes on /health and /ready, a grace period above the drain, a locked-down pod, the migration Job
// running what the image holds.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { projectRoot, SETTING_NAMES, SETTINGS, type SettingDeclaration } from '../src/config/index.ts';
import { bundleOptions } from '../scripts/build.mjs';

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

/** `kubectl kustomize <dir>` for the features the files use. */
function render(dir: string): Doc[] {
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
  for (const image of (kustomization!.images as { name: string; newName?: string; newTag?: string; digest?: string }[] | undefined) ?? []) {
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

interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Json;
  startupProbe?: { httpGet?: { path: string; port: string } };
  livenessProbe?: { httpGet?: { path: string; port: string } };
  readinessProbe?: { httpGet?: { path: string; port: string } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface PodSpec {
  containers: Container[];
  securityContext?: Json;
  terminationGracePeriodSeconds?: number;
}
const podSpecs = (): [string, PodSpec][] =>
  rendered.flatMap((doc) => {
    const template = (doc.spec as { template?: { spec: PodSpec } } | undefined)?.template;
    return template ? [[`${doc.kind} ${doc.metadata.name}`, template.spec] as [string, PodSpec]] : [];
  });

describe('deploy/kubernetes, production overlay', () => {
  it('renders the Deployment, Service, PodDisruptionBudget, HorizontalPodAutoscaler, migration Job, ConfigMap and Secret, in one namespace', () => {
    expect(rendered.map((doc) => `${doc.apiVersion} ${doc.kind}`).sort()).toEqual(
      [
        'apps/v1 Deployment',
        'autoscaling/v2 HorizontalPodAutoscaler',
        'batch/v1 Job',
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
  }, 60_000);

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
      for (const container of pod.containers) {
        expect(container.envFrom).toEqual([
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

  it('gives a stop more time than the pause before SIGTERM and the drain together', () => {
    const [configMap] = ofKind<{ data: Record<string, string> }>('ConfigMap');
    const [deployment] = ofKind<{ spec: { template: { spec: PodSpec } } }>('Deployment');
    const pod = deployment!.spec.template.spec;
    const pauseSeconds = Number(pod.containers[0]!.lifecycle?.preStop?.exec?.command.at(-1) ?? 0);
    const drainSeconds = Number(configMap!.data.SHUTDOWN_GRACE_MS ?? SETTINGS.SHUTDOWN_GRACE_MS.default) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(pauseSeconds + drainSeconds);
  });

  it("runs every pod as a non-root user, on a read-only root file system, with no capability and the runtime's seccomp profile, with requests and limits", () => {
    expect(podSpecs().length).toBe(2);
    for (const [name, pod] of podSpecs()) {
      expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.securityContext?.runAsUser, name).not.toBe(0);
      for (const container of pod.containers) {
        expect(container.securityContext, name).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(Object.keys(container.resources?.requests ?? {}).sort(), name).toEqual(['cpu', 'memory']);
        expect(Object.keys(container.resources?.limits ?? {}).sort(), name).toEqual(['cpu', 'memory']);
        // The release's image, by digest.
        expect(container.image, name).toMatch(/@sha256:[0-9a-f]{64}$/);
      }
    }
  });

  it('migrates with a Job running the bundled runner the image holds, and scales the Deployment between the PodDisruptionBudget and the connection budget', () => {
    const [job] = ofKind<{ spec: { template: { spec: PodSpec & { restartPolicy: string } } } }>('Job');
    const command = job!.spec.template.spec.containers[0]!.command!;
    expect(command[0]).toBe('node');
    // scripts/build.mjs bundles scripts/migrate.ts as dist/src/migrate.js beside the service.
    expect(command[1]).toBe('dist/src/migrate.js');
    expect((bundleOptions('dist/src').entryPoints as Record<string, string>).migrate).toBe('scripts/migrate.ts');
    const [hpa] = ofKind<{ spec: { minReplicas: number; maxReplicas: number; scaleTargetRef: { kind: string; name: string } } }>(
      'HorizontalPodAutoscaler',
    );
    const [deployment] = ofKind<{ spec: { replicas?: number } }>('Deployment');
    const [configMap] = ofKind<{ data: Record<string, string> }>('ConfigMap');
    expect(hpa!.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment!.metadata.name });
    // The autoscaler owns the count: a replicas field would reset it at every apply.
    expect(deployment!.spec.replicas).toBeUndefined();
    expect(hpa!.spec.minReplicas).toBeGreaterThanOrEqual(2);
    // PostgreSQL's default max_connections (100) less about 20 kept for administration (docs/operations.md, "Several instances").
    expect(hpa!.spec.maxReplicas * Number(configMap!.data.DATABASE_POOL_MAX) + 1).toBeLessThanOrEqual(80);
    const [budget] = ofKind<{ spec: { maxUnavailable: number } }>('PodDisruptionBudget');
    expect(budget!.spec.maxUnavailable).toBeLessThan(hpa!.spec.minReplicas);
  });
});

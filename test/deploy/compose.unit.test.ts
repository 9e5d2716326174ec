import { describe, test } from 'vitest';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import type { TProperties } from '@sinclair/typebox';
import { loadConfig, type ConfigSpec } from '@kb/platform';
import { gatewayConfigSpec } from '@kb/gateway';
import { knowledgeBaseConfigSpec } from '@kb/knowledge-base';
import { ingestConfigSpec } from '@kb/ingest';
import { analyticsConfigSpec } from '@kb/analytics';
import { mcpConfigSpec } from '@kb/mcp';
import { generationConfigSpec } from '@kb/generation';
import { publishingConfigSpec } from '@kb/publishing';

/**
 * The deployment descriptions (docker-compose.yml, infra/k8s) against the config
 * schemas of the services they run: every service starts with the environment it
 * is given, no variable is a typo or unknown to its service, and addresses point at
 * things that exist. loadConfig ignores variables it does not read, so without this
 * a misspelt variable would silently fall back to its default.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const DOCKERFILE = 'infra/Dockerfile';

type Env = Record<string, string | undefined>;

interface ServiceConfig {
  /** The variables the service reads. */
  variables: ReadonlySet<string>;
  load(env: Env): Record<string, unknown>;
}

const serviceConfig = <T extends TProperties>(spec: ConfigSpec<T>): ServiceConfig => ({
  variables: new Set(Object.keys(spec.schema.properties)),
  load: (env) => loadConfig(spec, env),
});

/** SERVICE build arg (= folder under services/) -> the config spec its main.ts loads. */
const specs: Record<string, ServiceConfig> = {
  gateway: serviceConfig(gatewayConfigSpec),
  'knowledge-base': serviceConfig(knowledgeBaseConfigSpec),
  ingest: serviceConfig(ingestConfigSpec),
  analytics: serviceConfig(analyticsConfigSpec),
  mcp: serviceConfig(mcpConfigSpec),
  generation: serviceConfig(generationConfigSpec),
  publishing: serviceConfig(publishingConfigSpec),
};

function problemsOf(spec: ServiceConfig, env: Env): string | undefined {
  try {
    spec.load(env);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function unknownKeys(spec: ServiceConfig, env: Env): string[] {
  return Object.keys(env).filter((key) => !spec.variables.has(key));
}

/** Services that have a standalone entry and a config spec (all-in-one runs them all in one process). */
function deployableServices(): string[] {
  return readdirSync(join(root, 'services')).filter(
    (name) =>
      name !== 'all-in-one' &&
      existsSync(join(root, 'services', name, 'src/main.ts')) &&
      existsSync(join(root, 'services', name, 'src/config.ts')),
  );
}

/** host of `host:port`, `scheme://host:port/...` or `scheme://user:pw@host,host2/...` values, for each listed host. */
function hostsOf(value: string): string[] {
  const withoutScheme = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const authority = withoutScheme.split(/[/?#]/)[0] ?? '';
  const hosts = authority.slice(authority.lastIndexOf('@') + 1);
  return hosts.split(',').map((h) => h.replace(/:\d+$/, ''));
}

function portOf(address: string): number {
  const match = /:(\d+)$/.exec(address);
  assert.ok(match, `${address} has no port`);
  return Number(match[1]);
}

/** Variables whose value is an address of another component. */
const ADDRESS_VARS = /(_GRPC|_URL|_BROKERS|_ENDPOINT)$/;

/** The service (folder under services/) a `*_GRPC` variable must reach: KNOWLEDGE_BASE_GRPC -> knowledge-base. */
const grpcTargetOf = (key: string) =>
  key
    .replace(/_GRPC$/, '')
    .toLowerCase()
    .replace(/_/g, '-');

/** Variables naming another service of this system by HTTP URL, and that service. */
const HTTP_TARGETS: Record<string, string> = { GATEWAY_URL: 'gateway' };

/** Port of an http(s) URL, its scheme's default when it names none. */
const urlPort = (value: string) => {
  const url = new URL(value);
  return Number(url.port || (url.protocol === 'https:' ? 443 : 80));
};

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, ComposeService>;
    volumes?: Record<string, unknown>;
  };
  const services = compose.services;
  const built = Object.entries(services).filter(([, s]) => buildOf(s)?.dockerfile === DOCKERFILE);

  interface ComposeService {
    build?: string | { context?: string; dockerfile?: string; args?: Record<string, unknown> | string[] };
    environment?: Record<string, unknown> | string[];
    depends_on?: string[] | Record<string, { condition?: string }>;
    volumes?: (string | { type?: string; source?: string })[];
    ports?: unknown[];
  }

  function buildOf(s: ComposeService): { context?: string; dockerfile?: string; args: Record<string, string> } | undefined {
    if (s.build === undefined) return undefined;
    if (typeof s.build === 'string') return { context: s.build, dockerfile: 'Dockerfile', args: {} };
    const args = Array.isArray(s.build.args)
      ? Object.fromEntries(s.build.args.map((a) => [a.split('=')[0]!, a.slice(a.indexOf('=') + 1)]))
      : Object.fromEntries(Object.entries(s.build.args ?? {}).map(([k, v]) => [k, String(v)]));
    return { ...s.build, args };
  }

  /** Compose interpolation with the shell unset: `${VAR:-default}` / `${VAR-default}` give the default. */
  function interpolate(value: string, where: string): string {
    return value.replace(
      /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
      (match, name, op, arg, bare) => {
        if (match === '$$') return '$';
        if (bare !== undefined || op === undefined) return '';
        if (op === ':-' || op === '-') return interpolate(arg as string, where);
        assert.fail(`${where}: ${match} has no default, so the file alone does not say what the service gets`);
      },
    );
  }

  function environmentOf(name: string, s: ComposeService): Env {
    const entries: [string, unknown][] = Array.isArray(s.environment)
      ? s.environment.map((e) => (e.includes('=') ? [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)] : [e, null]))
      : Object.entries(s.environment ?? {});
    const env: Env = {};
    for (const [key, raw] of entries) {
      // A variable without a value is taken from the shell running compose.
      env[key] = raw === null || raw === undefined ? undefined : interpolate(String(raw), `${name}.environment.${key}`);
    }
    return env;
  }

  function dependsOn(s: ComposeService): string[] {
    if (!s.depends_on) return [];
    return Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on);
  }

  test('builds the application services from infra/Dockerfile, each with a SERVICE that has a config spec', () => {
    assert.ok(existsSync(join(root, DOCKERFILE)));
    assert.ok(built.length > 0, 'no compose service is built from infra/Dockerfile');
    for (const [name, s] of built) {
      const build = buildOf(s)!;
      assert.equal(build.context ?? '.', '.', `${name}: build context must be the repository root`);
      const service = build.args.SERVICE;
      assert.ok(service, `${name}: no SERVICE build arg`);
      assert.ok(specs[service], `${name}: SERVICE=${service} has no config spec in test/deploy/compose.unit.test.ts`);
      assert.ok(existsSync(join(root, 'services', service, 'src/main.ts')), `${name}: services/${service}/src/main.ts does not exist`);
    }
  });

  test('containers listen on every interface (HOST=0.0.0.0), where npm start keeps to loopback', () => {
    const dockerfile = readFileSync(join(root, DOCKERFILE), 'utf8');
    assert.match(dockerfile, /^\s+HOST=0\.0\.0\.0 \\$/m, 'infra/Dockerfile must set HOST=0.0.0.0 in its runtime ENV');
    for (const [name, s] of built) {
      const service = buildOf(s)!.args.SERVICE;
      if (service !== 'gateway' && service !== 'mcp' && service !== 'all-in-one') continue;
      assert.equal(environmentOf(name, s).HOST, '0.0.0.0', `${name}: HTTP services in compose set HOST=0.0.0.0`);
    }
  });

  test('runs every deployable service', () => {
    const running = new Set(built.map(([, s]) => buildOf(s)!.args.SERVICE));
    for (const service of deployableServices()) assert.ok(running.has(service), `services/${service} is not in docker-compose.yml`);
  });

  for (const [name, s] of built) {
    const service = buildOf(s)!.args.SERVICE!;
    const spec = specs[service];
    if (!spec) continue; // reported by the test above

    test(`${name}: its environment passes the ${service} config spec`, () => {
      const env = environmentOf(name, s);
      assert.equal(problemsOf(spec, env), undefined);
    });

    test(`${name}: passes only variables that the ${service} config spec reads`, () => {
      assert.deepEqual(unknownKeys(spec, environmentOf(name, s)), []);
    });

    test(`${name}: addresses point at compose services it depends on`, () => {
      const env = environmentOf(name, s);
      const deps = new Set(dependsOn(s));
      for (const [key, value] of Object.entries(env)) {
        // PUBLIC_URL is the address people and assistants use from outside, not a compose service.
        if (!value || !ADDRESS_VARS.test(key) || key === 'PUBLIC_URL') continue;
        for (const host of hostsOf(value)) {
          assert.ok(services[host], `${name}: ${key}=${value} names ${host}, which is not a compose service`);
          assert.ok(deps.has(host), `${name}: ${key} points at ${host} but ${name} does not depend_on it`);
        }
      }
    });
  }

  test('the gateway is given the address of every service it calls', () => {
    const gateways = built.filter(([, s]) => buildOf(s)!.args.SERVICE === 'gateway');
    assert.ok(gateways.length > 0, 'no gateway in docker-compose.yml');
    for (const [name, s] of gateways) {
      const env = environmentOf(name, s);
      for (const key of ['KNOWLEDGE_BASE_GRPC', 'INGEST_GRPC', 'ANALYTICS_GRPC', 'GENERATION_GRPC', 'PUBLISHING_GRPC'])
        assert.ok(env[key], `${name}: ${key} is not set`);
    }
  });

  for (const [name, s] of built) {
    test(`${name}: each *_GRPC address is the gRPC port of the service it names, each service URL its HTTP port`, () => {
      const env = environmentOf(name, s);
      for (const [key, value] of Object.entries(env)) {
        if (!value) continue;
        const expected = key.endsWith('_GRPC') ? grpcTargetOf(key) : HTTP_TARGETS[key];
        if (!expected) continue;
        const [host] = key.endsWith('_GRPC') ? hostsOf(value) : [new URL(value).hostname];
        const target = services[host!];
        assert.ok(target, `${name}: ${key}=${value}: ${host} is not a compose service`);
        assert.equal(buildOf(target)?.args.SERVICE, expected, `${name}: ${key}=${value}: ${host} does not run ${expected}`);
        const targetEnv = environmentOf(host!, target);
        if (key.endsWith('_GRPC')) {
          assert.equal(portOf(value), Number(targetEnv.GRPC_PORT), `${name}: port of ${key} is not ${host}'s GRPC_PORT`);
          assert.equal(targetEnv.GRPC_HOST, '0.0.0.0', `${host}: GRPC_HOST must bind every interface to be reachable from ${name}`);
        } else {
          assert.equal(urlPort(value), Number(targetEnv.PORT), `${name}: port of ${key} is not ${host}'s PORT`);
          assert.equal(targetEnv.HOST, '0.0.0.0', `${host}: HOST must bind every interface to be reachable from ${name}`);
        }
      }
    });
  }

  test('every depends_on target exists, and healthy conditions have a healthcheck', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const target of dependsOn(s)) assert.ok(services[target], `${name} depends on ${target}, which is not a compose service`);
      if (s.depends_on && !Array.isArray(s.depends_on)) {
        for (const [target, { condition } = {}] of Object.entries(s.depends_on)) {
          if (condition !== 'service_healthy') continue;
          const t = services[target] as { healthcheck?: unknown; build?: unknown } | undefined;
          // Services built from infra/Dockerfile inherit its HEALTHCHECK.
          const fromDockerfile = t && buildOf(t as ComposeService)?.dockerfile === DOCKERFILE;
          assert.ok(t?.healthcheck || fromDockerfile, `${name} waits for ${target} to be healthy, but it has no healthcheck`);
        }
      }
    }
  });

  test('named volumes are declared and bind-mounted files exist', () => {
    const declared = new Set(Object.keys(compose.volumes ?? {}));
    for (const [name, s] of Object.entries(services)) {
      for (const volume of s.volumes ?? []) {
        const source = typeof volume === 'string' ? volume.split(':')[0]! : (volume.source ?? '');
        if (source.startsWith('.') || source.startsWith('/')) {
          assert.ok(existsSync(join(root, source)), `${name}: mounts ${source}, which does not exist`);
        } else if (source) {
          assert.ok(declared.has(source), `${name}: volume ${source} is not declared under volumes:`);
        }
      }
    }
  });
});

describe('infra/k8s', () => {
  interface K8sObject {
    apiVersion?: string;
    kind?: string;
    metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
    data?: Record<string, string>;
    stringData?: Record<string, string>;
    spec?: Record<string, unknown>;
    resources?: string[];
  }
  interface Container {
    name: string;
    env?: {
      name: string;
      value?: string;
      valueFrom?: { configMapKeyRef?: { name: string; key: string }; secretKeyRef?: { name: string; key: string } };
    }[];
    envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string }; prefix?: string }[];
    ports?: { name?: string; containerPort: number }[];
    readinessProbe?: Probe;
    livenessProbe?: Probe;
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  }
  interface Probe {
    httpGet?: { path: string; port: number | string };
    tcpSocket?: { port: number | string };
    grpc?: { port: number };
    exec?: unknown;
  }
  interface PodTemplate {
    metadata?: { labels?: Record<string, string> };
    spec: { containers: Container[] };
  }

  const dir = join(root, 'infra/k8s');
  const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
  const objects: (K8sObject & { file: string })[] = files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8')).flatMap((doc) => {
      assert.deepEqual(doc.errors, [], `${file} does not parse`);
      const value = doc.toJS() as K8sObject | null;
      return value ? [{ ...value, file }] : [];
    }),
  );
  const namespaceOf = (o: K8sObject) => o.metadata?.namespace ?? 'default';
  const find = (kind: string, name: string, namespace: string) =>
    objects.find((o) => o.kind === kind && o.metadata?.name === name && namespaceOf(o) === namespace);
  const deployments = objects.filter((o) => o.kind === 'Deployment');
  const k8sServices = objects.filter((o) => o.kind === 'Service');

  function dataOf(kind: 'ConfigMap' | 'Secret', name: string, namespace: string, where: string): Record<string, string> {
    const object = find(kind, name, namespace);
    assert.ok(object, `${where}: ${kind} ${namespace}/${name} is not defined in infra/k8s`);
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(object.data ?? {}))
      data[k] = kind === 'Secret' ? Buffer.from(v, 'base64').toString('utf8') : String(v);
    for (const [k, v] of Object.entries(object.stringData ?? {})) data[k] = String(v);
    return data;
  }

  /** The environment Kubernetes gives the container: envFrom sources in order, then env. */
  function environmentOf(container: Container, namespace: string, where: string): Env {
    const env: Env = {};
    for (const source of container.envFrom ?? []) {
      const data = source.configMapRef
        ? dataOf('ConfigMap', source.configMapRef.name, namespace, where)
        : source.secretRef
          ? dataOf('Secret', source.secretRef.name, namespace, where)
          : assert.fail(`${where}: unsupported envFrom source`);
      for (const [k, v] of Object.entries(data)) env[(source.prefix ?? '') + k] = v;
    }
    for (const variable of container.env ?? []) {
      const ref = variable.valueFrom?.configMapKeyRef ?? variable.valueFrom?.secretKeyRef;
      if (ref) {
        const kind = variable.valueFrom?.configMapKeyRef ? 'ConfigMap' : 'Secret';
        const data = dataOf(kind, ref.name, namespace, where);
        assert.ok(ref.key in data, `${where}: ${variable.name} refers to missing key ${ref.key} of ${kind} ${ref.name}`);
        env[variable.name] = data[ref.key];
      } else {
        assert.ok(variable.valueFrom === undefined, `${where}: ${variable.name} uses an unsupported valueFrom`);
        env[variable.name] = variable.value ?? '';
      }
    }
    return env;
  }

  const podOf = (d: K8sObject) => (d.spec as { template: PodTemplate }).template;
  const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
    !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

  test('kustomization.yaml lists every manifest', () => {
    const kustomization = objects.find((o) => o.kind === 'Kustomization');
    assert.ok(kustomization, 'no kustomization.yaml');
    const listed = new Set(kustomization.resources ?? []);
    for (const file of files)
      if (file !== kustomization.file) assert.ok(listed.has(file), `${file} is not in kustomization.yaml resources`);
    for (const file of listed) assert.ok(files.includes(file), `kustomization.yaml lists ${file}, which does not exist`);
  });

  test('runs every deployable service, each with a config spec', () => {
    assert.ok(deployments.length > 0, 'no Deployment in infra/k8s');
    const running = new Set(deployments.flatMap((d) => podOf(d).spec.containers.map((c) => c.name)));
    for (const service of deployableServices()) assert.ok(running.has(service), `services/${service} has no Deployment in infra/k8s`);
    for (const service of running) assert.ok(specs[service], `container ${service} has no config spec in test/deploy/compose.unit.test.ts`);
  });

  for (const deployment of deployments) {
    const namespace = namespaceOf(deployment);
    const pod = podOf(deployment);
    for (const container of pod.spec.containers) {
      const where = `${deployment.file}: ${deployment.metadata?.name}/${container.name}`;
      const spec = specs[container.name];
      if (!spec) continue; // reported above

      test(`${where}: its environment passes the ${container.name} config spec`, () => {
        assert.equal(problemsOf(spec, environmentOf(container, namespace, where)), undefined);
      });

      test(`${where}: passes only variables that the ${container.name} config spec reads`, () => {
        assert.deepEqual(unknownKeys(spec, environmentOf(container, namespace, where)), []);
      });

      test(`${where}: has probes on its own port and resource requests and limits`, () => {
        const env = environmentOf(container, namespace, where);
        const config = spec.load(env) as { PORT?: number; GRPC_PORT?: number };
        const ownPort = container.name === 'gateway' || container.name === 'mcp' ? config.PORT : config.GRPC_PORT;
        assert.ok(ownPort, `${where}: no port configured`);
        for (const kind of ['readinessProbe', 'livenessProbe'] as const) {
          const probe = container[kind];
          assert.ok(probe, `${where}: no ${kind}`);
          const port = probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port;
          const number = typeof port === 'string' ? container.ports?.find((p) => p.name === port)?.containerPort : port;
          assert.equal(number, ownPort, `${where}: ${kind} does not probe port ${ownPort}`);
          if (container.name === 'gateway') assert.ok(probe.httpGet, `${where}: the gateway's ${kind} should be an HTTP check`);
        }
        for (const part of ['requests', 'limits'] as const) {
          assert.ok(
            container.resources?.[part]?.cpu && container.resources[part].memory,
            `${where}: resources.${part} needs cpu and memory`,
          );
        }
      });

      test(`${where}: names each variable once (server-side apply rejects a duplicate)`, () => {
        const names = (container.env ?? []).map((v) => v.name);
        assert.deepEqual(
          names.filter((n, i) => names.indexOf(n) !== i),
          [],
        );
      });

      test(`${where}: each service URL names the Service of that service and routes to its HTTP port`, () => {
        const env = environmentOf(container, namespace, where);
        for (const [key, expected] of Object.entries(HTTP_TARGETS)) {
          const value = env[key];
          if (!value) continue;
          const [serviceName, serviceNamespace = namespace] = new URL(value).hostname.split('.');
          const service = find('Service', serviceName!, serviceNamespace);
          assert.ok(service, `${where}: ${key}=${value}: no Service ${serviceNamespace}/${serviceName}`);
          const port = (service.spec as { ports: { port: number; targetPort?: number | string }[] }).ports.find(
            (p) => p.port === urlPort(value),
          );
          assert.ok(port, `${where}: ${key}=${value}: Service ${serviceName} has no port ${urlPort(value)}`);
          const selector = (service.spec as { selector?: Record<string, string> }).selector;
          const targets = deployments.filter((d) => namespaceOf(d) === serviceNamespace && selects(selector, podOf(d).metadata?.labels));
          assert.equal(targets.length, 1, `${where}: Service ${serviceName} should select exactly one Deployment`);
          const target = podOf(targets[0]!).spec.containers[0]!;
          assert.equal(target.name, expected, `${where}: ${key} reaches ${target.name}, not ${expected}`);
          const targetEnv = environmentOf(target, serviceNamespace, `${targets[0]!.metadata?.name}`);
          const targetPort =
            typeof port.targetPort === 'string'
              ? target.ports?.find((p) => p.name === port.targetPort)?.containerPort
              : (port.targetPort ?? port.port);
          assert.equal(targetPort, Number(targetEnv.PORT), `${where}: Service ${serviceName} does not route to ${target.name}'s PORT`);
        }
      });

      test(`${where}: *_GRPC addresses name a Service that routes to that service's gRPC port`, () => {
        const env = environmentOf(container, namespace, where);
        for (const [key, value] of Object.entries(env)) {
          if (!key.endsWith('_GRPC') || !value) continue;
          const [host] = hostsOf(value);
          const [serviceName, serviceNamespace = namespace] = host!.split('.');
          const service = find('Service', serviceName!, serviceNamespace);
          assert.ok(service, `${where}: ${key}=${value}: no Service ${serviceNamespace}/${serviceName}`);
          const port = (service.spec as { ports: { port: number; targetPort?: number | string }[] }).ports.find(
            (p) => p.port === portOf(value),
          );
          assert.ok(port, `${where}: ${key}=${value}: Service ${serviceName} has no port ${portOf(value)}`);
          const selector = (service.spec as { selector?: Record<string, string> }).selector;
          const targets = deployments.filter((d) => namespaceOf(d) === serviceNamespace && selects(selector, podOf(d).metadata?.labels));
          assert.equal(targets.length, 1, `${where}: Service ${serviceName} should select exactly one Deployment`);
          const target = podOf(targets[0]!).spec.containers[0]!;
          const expected = grpcTargetOf(key);
          assert.equal(target.name, expected, `${where}: ${key} reaches ${target.name}, not ${expected}`);
          const targetEnv = environmentOf(target, serviceNamespace, `${targets[0]!.metadata?.name}`);
          const targetPort =
            typeof port.targetPort === 'string'
              ? target.ports?.find((p) => p.name === port.targetPort)?.containerPort
              : (port.targetPort ?? port.port);
          assert.equal(
            targetPort,
            Number(targetEnv.GRPC_PORT),
            `${where}: Service ${serviceName} does not route to ${target.name}'s GRPC_PORT`,
          );
          assert.equal(targetEnv.GRPC_HOST, '0.0.0.0', `${target.name}: GRPC_HOST must bind every interface`);
        }
      });
    }

    test(`${deployment.file}: ${deployment.metadata?.name} has a Service that selects its pods`, () => {
      const matching = k8sServices.filter(
        (s) => namespaceOf(s) === namespace && selects((s.spec as { selector?: Record<string, string> }).selector, pod.metadata?.labels),
      );
      assert.ok(matching.length > 0, `no Service selects the pods of ${deployment.metadata?.name}`);
      const selector = (deployment.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels;
      assert.ok(selects(selector, pod.metadata?.labels), `${deployment.metadata?.name}: selector does not match its pod labels`);
    });
  }

  test('every namespaced object lives in a namespace defined here', () => {
    const namespaces = new Set(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata?.name));
    for (const o of objects) {
      if (o.kind === 'Namespace' || o.kind === 'Kustomization') continue;
      assert.ok(
        namespaces.has(o.metadata?.namespace),
        `${o.file}: ${o.kind} ${o.metadata?.name} is not in a namespace defined in infra/k8s`,
      );
    }
  });
});

describe('infra/Dockerfile', () => {
  const dockerfile = readFileSync(join(root, DOCKERFILE), 'utf8').replace(/\\\n/g, ' ');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  test('the image carries the built web console where its CONSOLE_DIR points, for the gateway to serve', () => {
    assert.ok(specs.gateway!.variables.has('CONSOLE_DIR'), 'the gateway no longer reads CONSOLE_DIR');
    const consoleDir = /\bCONSOLE_DIR=(\/app\/\S+)/.exec(runtime)?.[1];
    assert.ok(consoleDir, 'the runtime stage sets no CONSOLE_DIR under /app');
    const inRepo = consoleDir.slice('/app/'.length);
    assert.ok(existsSync(join(root, inRepo.replace(/\/dist$/, ''), 'package.json')), `${inRepo} is not the output of a workspace`);
    assert.match(
      dockerfile,
      new RegExp(`cp -a [^\\n]*\\b${inRepo} /out/${inRepo.replace(/\/dist$/, '')}/`),
      `${inRepo} is not copied into the image`,
    );
    assert.match(dockerfile, new RegExp(`test -f ${inRepo}/index\\.html`), 'the build does not fail when the console was not built');
  });
});

describe('infra/k8s/README.md', () => {
  const readme = readFileSync(join(root, 'infra/k8s/README.md'), 'utf8');

  test('names every manifest and every deployable service, and the Kafka the services are tested with', () => {
    for (const file of readdirSync(join(root, 'infra/k8s')).filter((f) => /\.ya?ml$/.test(f)))
      assert.ok(readme.includes(`\`${file}\``), `${file} is not described`);
    for (const service of deployableServices()) assert.ok(readme.includes(service), `${service} is not described`);
    const kafka = readFileSync(join(root, 'infra/kafka/pom.xml'), 'utf8').match(/<kafka\.version>(\d+)\./)?.[1];
    assert.ok(kafka, 'no kafka.version in infra/kafka/pom.xml');
    assert.match(readme, new RegExp(`Kafka ${kafka}\\.x`), `the README does not say Kafka ${kafka}.x`);
    assert.doesNotMatch(readme, /no gRPC health|gRPC health service yet/i);
  });

  test('no manifest says its service has no gRPC health service (each answers grpc.health.v1)', () => {
    for (const file of readdirSync(join(root, 'infra/k8s')).filter((f) => /\.ya?ml$/.test(f)))
      assert.doesNotMatch(readFileSync(join(root, 'infra/k8s', file), 'utf8'), /no gRPC health/i, file);
  });
});

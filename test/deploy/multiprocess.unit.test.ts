import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { SERVICES, SHARED_SETTINGS, STATELESS_FRONTS, grpcVariable, root } from '../e2e/multiprocess-harness.js';

/**
 * The multi-process suite (test/e2e/multiprocess.e2e.test.ts) and the deployment
 * descriptions run the same processes: the same services, each from its own
 * entry point, the same kind of server, the same bus, the gateway wired to the
 * same gRPC services, and every setting the suite gives a service also set in
 * the deployment. (The suite keeps stores and the index embedded, one data
 * folder per service; the deployment points them at MongoDB and Elasticsearch.)
 */

interface ComposeService {
  build?: { dockerfile?: string; args?: Record<string, string> };
  environment?: Record<string, string | null>;
}
interface Container {
  name: string;
  env?: { name: string; value?: string }[];
  ports?: { name?: string; containerPort: number }[];
}
interface K8sObject {
  kind?: string;
  metadata?: { name?: string };
  data?: Record<string, string>;
  spec?: { template?: { spec?: { containers?: Container[] } } };
}

const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
/** Application services: the ones built from infra/Dockerfile, by their SERVICE build arg. */
const composeApps = new Map(
  Object.entries(compose.services)
    .filter(([, s]) => s.build?.dockerfile === 'infra/Dockerfile')
    .filter(([name, s]) => !STATELESS_FRONTS.includes(s.build!.args!.SERVICE ?? name))
    .map(([name, s]) => [s.build!.args!.SERVICE ?? name, s.environment ?? {}]),
);

const k8sDir = join(root, 'infra/k8s');
const k8s = readdirSync(k8sDir)
  .filter((f) => /\.ya?ml$/.test(f))
  .flatMap((f) => parseAllDocuments(readFileSync(join(k8sDir, f), 'utf8')).map((d) => d.toJS() as K8sObject | null))
  .filter((o): o is K8sObject => o !== null);
const deployments = new Map(
  k8s
    .filter((o) => o.kind === 'Deployment' && !STATELESS_FRONTS.includes(o.metadata!.name!))
    .map((d) => [d.metadata!.name!, d.spec!.template!.spec!.containers![0]!]),
);
const sharedConfigMap = k8s.find((o) => o.kind === 'ConfigMap' && o.metadata?.name === 'kb-shared')?.data ?? {};
const envNames = (c: Container) => new Set((c.env ?? []).map((e) => e.name));

const names = SERVICES.map((s) => s.name).sort();
const grpcVariables = SERVICES.filter((s) => s.kind === 'grpc')
  .map((s) => grpcVariable(s.name))
  .sort();

describe('the multi-process suite runs what compose and Kubernetes deploy', () => {
  it('the same services, each from its own entry point', () => {
    assert.deepEqual([...composeApps.keys()].sort(), names);
    assert.deepEqual([...deployments.keys()].sort(), names);
    // infra/Dockerfile runs services/$SERVICE/dist/main.js, compiled from src/main.ts.
    assert.match(readFileSync(join(root, 'infra/Dockerfile'), 'utf8'), /exec node services\/\$SERVICE\/dist\/main\.js/);
    for (const s of SERVICES) assert.equal(s.entry, `services/${s.name}/src/main.ts`);
  });

  it('the same bus: Kafka', () => {
    assert.equal(SHARED_SETTINGS.BUS, 'kafka');
    for (const [name, env] of composeApps) assert.equal(env.BUS, 'kafka', `compose ${name}`);
    assert.equal(sharedConfigMap.BUS, 'kafka');
  });

  it('the same servers: gRPC services on GRPC_PORT, the gateway on PORT', () => {
    for (const s of SERVICES) {
      const env = composeApps.get(s.name)!;
      const container = deployments.get(s.name)!;
      const variable = s.kind === 'grpc' ? 'GRPC_PORT' : 'PORT';
      assert.ok(variable in env, `compose ${s.name} sets ${variable}`);
      assert.ok(envNames(container).has(variable), `k8s ${s.name} sets ${variable}`);
    }
  });

  it('the gateway wired to exactly the gRPC services the suite starts', () => {
    for (const s of SERVICES.filter((x) => x.kind === 'http')) {
      const composeGrpc = Object.keys(composeApps.get(s.name)!)
        .filter((k) => k.endsWith('_GRPC'))
        .sort();
      const k8sGrpc = [...envNames(deployments.get(s.name)!)].filter((k) => k.endsWith('_GRPC')).sort();
      assert.deepEqual(composeGrpc, grpcVariables);
      assert.deepEqual(k8sGrpc, grpcVariables);
    }
  });

  it("every setting of a service's own in the suite is set in compose too", () => {
    for (const s of SERVICES) {
      const env = composeApps.get(s.name)!;
      for (const key of Object.keys(s.env ?? {})) assert.ok(key in env, `compose ${s.name} sets ${key}`);
    }
  });
});

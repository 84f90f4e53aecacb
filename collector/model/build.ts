import type { InstanceIdentity } from './batches.js';

/**
 * What makes a *build*: what was deployed where. Processes of one build run the same server (name and version)
 * of one service on one host, in the same deployment when the sender names one (`deployment.environment.name`,
 * `k8s.namespace.name`, `k8s.deployment.name`). `service.instance.id` is not part of it: a build's processes are
 * its instances, or, for a server that serves one client session per process (stdio), its sessions.
 */
const BUILD_KEYS = [
  'service',
  'serverName',
  'serverVersion',
  'host',
  'deploymentEnvironment',
  'k8sNamespace',
  'k8sDeployment',
] as const satisfies readonly (keyof InstanceIdentity)[];

/** The attributes of a build, as {@link BUILD_KEYS} names them. */
export type BuildIdentity = Pick<InstanceIdentity, (typeof BUILD_KEYS)[number]>;

/**
 * A build's key: the canonical JSON array of its {@link BUILD_KEYS} values (absent = null), as stored with each
 * instance (`instances.build_key`) so that reads can group by it. The stores' migrations compute the same text for
 * rows written before the column existed (`json_array` in SQLite, `array_to_json` in PostgreSQL: no spaces).
 */
export function buildKey(identity: BuildIdentity): string {
  return JSON.stringify(BUILD_KEYS.map((key) => identity[key]));
}

/** A build as people read it: `name@version on host`, with the deployment attributes the sender set. */
export function buildLabel(identity: BuildIdentity): string {
  const server = identity.serverName ?? identity.service ?? '(unnamed server)';
  const deployment = [identity.deploymentEnvironment, identity.k8sNamespace, identity.k8sDeployment].filter((value) => value !== null).join('/');
  return `${identity.serverVersion === null ? server : `${server}@${identity.serverVersion}`}${identity.host === null ? '' : ` on ${identity.host}`}${deployment === '' ? '' : ` (${deployment})`}`;
}

/**
 * The label of a build from its key ({@link buildKey}), as rows grouped by build show it; a key that does not read
 * as one (none stored) is shown as an unknown build.
 */
export function buildLabelOfKey(key: string | null): string {
  let values: unknown = null;
  try {
    if (key !== null) values = JSON.parse(key);
  } catch {
    // Not a key this collector wrote: shown as unknown below.
  }
  if (!Array.isArray(values) || values.length !== BUILD_KEYS.length || !values.every((value) => value === null || typeof value === 'string'))
    return '(unknown build)';
  return buildLabel(Object.fromEntries(BUILD_KEYS.map((name, index) => [name, values[index] as string | null])) as BuildIdentity);
}

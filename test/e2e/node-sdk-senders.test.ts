import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getJson, matrix, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { testDatabases } from '../collector/store/postgres-server.js';
import { ROOT, agentEnv, fixture } from '../support/processes.js';

/**
 * The standard OpenTelemetry Node.js SDK (`NodeSDK`, OTEL_* variables only) has no service.instance.id in its
 * resource. Its processes are told apart by host.name and process.pid, and their cumulative totals must count
 * exactly, each process under its own derived instance.
 */

interface RejectionsAnswer {
  rejections: { reason: string; service: string | null; points: number }[];
}

interface InstancesAnswer {
  instances: { service: string | null; instanceId: string | null; host: string | null }[];
}

/** One fixture process, driven line by line (test/fixtures/node-sdk-server.cjs). */
class SdkServer {
  readonly pid: Promise<number>;
  private readonly lines: AsyncIterator<string>;
  private readonly exited: Promise<number | null>;
  private stderr = '';

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly name: string,
  ) {
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    this.pid = this.next().then((line) => (JSON.parse(line) as { pid: number }).pid);
  }

  static start(name: string, env: Record<string, string>): SdkServer {
    return new SdkServer(spawn(process.execPath, [fixture('node-sdk-server.cjs')], { cwd: ROOT, env }), name);
  }

  private async next(): Promise<string> {
    const { value, done } = await this.lines.next();
    if (done === true) throw new Error(`${this.name} ended early (exit ${String(await this.exited)}):\n${this.stderr}`);
    return value;
  }

  async command(line: string): Promise<void> {
    await this.pid;
    this.child.stdin.write(`${line}\n`);
    await this.next();
  }

  /** One session of `calls` tool calls: `calls` + 1 requests (initialize, then the calls). */
  call(calls: number): Promise<void> {
    return this.command(`call ${calls}`);
  }

  flush(): Promise<void> {
    return this.command('flush');
  }

  /** sdk.shutdown() exports the last totals; the process must end with 0. */
  async exit(): Promise<void> {
    await this.pid;
    this.child.stdin.end('exit\n');
    const code = await this.exited;
    if (code !== 0) throw new Error(`${this.name} exited with ${String(code)}:\n${this.stderr}`);
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

const databases = testDatabases('nodesdk');
afterAll(() => databases.dropAll());

describe.each(['SQLite', 'PostgreSQL'] as const)('NodeSDK senders without service.instance.id (%s)', (backend) => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let dbPath: string | undefined;
  const servers: SdkServer[] = [];
  beforeEach(async () => {
    temp = await tempDir();
    dbPath = backend === 'PostgreSQL' ? await databases.create() : undefined;
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) server.kill();
    await temp.cleanup();
  });

  it('two processes on one host with one service name, and a restart, count exactly, each under pid:<pid>@<host.name>; a NodeSDK with neither pid nor host is refused, visibly', async () => {
    const collector = await startTestCollector(temp.dir, dbPath === undefined ? {} : { dbPath });
    try {
      // Periodic exports every 200 ms on top of the explicit flushes: the cumulative totals arrive many times over.
      const env = agentEnv(collector.url, { OTEL_SERVICE_NAME: 'sdk-svc', OTEL_TRACES_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' });
      const start = (name: string): SdkServer => {
        const server = SdkServer.start(name, env);
        servers.push(server);
        return server;
      };
      const a = start('A');
      const b = start('B');
      // Only the environment detector: no process.pid, no host.name. Nothing tells its processes apart.
      const anonymous = SdkServer.start('the sender without pid or host', { ...env, OTEL_SERVICE_NAME: 'sdk-anon', OTEL_NODE_RESOURCE_DETECTORS: 'env' });
      servers.push(anonymous);
      await anonymous.call(2);
      await a.call(3);
      await b.call(5);
      await a.flush();
      await b.flush();
      await a.call(4);
      await b.call(1);
      await a.exit();
      // A again, as a new process (a restart): same host, same service, its own pid.
      const a2 = start('A after its restart');
      await a2.call(2);
      await b.flush();
      await a2.exit();
      await b.exit();
      await anonymous.exit();

      const [pidA, pidB, pidA2] = await Promise.all([a.pid, b.pid, a2.pid]);
      const host = hostname();
      const instance = (pid: number): string => `pid:${pid}@${host}`;
      const requests = async (query = ''): Promise<number> =>
        (await matrix(collector.url, `&service=sdk-svc${query}`)).rows.reduce((sum, row) => sum + row.requests, 0);
      expect(await requests()).toBe(4 + 5 + 6 + 2 + 3);
      expect(await requests(`&instance=${encodeURIComponent(instance(pidA))}`)).toBe(4 + 5);
      expect(await requests(`&instance=${encodeURIComponent(instance(pidB))}`)).toBe(6 + 2);
      expect(await requests(`&instance=${encodeURIComponent(instance(pidA2))}`)).toBe(3);
      const { body } = await getJson<InstancesAnswer>(`${collector.url}/api/v1/instances?service=sdk-svc`);
      expect(body.instances.map((row) => [row.instanceId, row.host]).sort()).toEqual([pidA, pidB, pidA2].map((pid) => [instance(pid), host]).sort());

      // Refused, not mis-counted, and visible: the same number on /metrics and in the API, nothing in the matrix.
      expect((await matrix(collector.url, '&service=sdk-anon')).rows).toEqual([]);
      const exposition = await (await fetch(`${collector.url}/metrics`)).text();
      const onMetrics = Number(/^extscope_collector_points_rejected_total\{reason="no_instance_identity",service="sdk-anon"\} (\d+)$/m.exec(exposition)?.[1]);
      // At least its last export's two streams (requests and the extension's), carried by sdk.shutdown().
      expect(onMetrics).toBeGreaterThanOrEqual(2);
      expect(exposition).toContain(`extscope_collector_points_total{result="rejected"} ${onMetrics}`);
      const { body: refused } = await getJson<RejectionsAnswer>(`${collector.url}/api/v1/rejections`);
      expect(refused.rejections.map(({ reason, service, points }) => ({ reason, service, points }))).toEqual([
        { reason: 'no_instance_identity', service: 'sdk-anon', points: onMetrics },
      ]);
    } finally {
      await collector.close();
    }
    // Four real processes, each loading the OpenTelemetry SDK and the MCP SDK: seconds each on a busy machine.
  }, 180_000);
});

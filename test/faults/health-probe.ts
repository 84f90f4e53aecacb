import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./health-probe.mjs', import.meta.url));

export interface HealthProbe {
  /** Stops probing; the latencies of the answers (ms, sorted), when the slowest started, and the probes that failed. */
  stop(): Promise<{ latencies: number[]; slowestAt: number; failures: string[] }>;
}

/** Probes `url` every `intervalMs` from a child process of its own (health-probe.mjs). */
export function probeHealth(url: string, intervalMs = 50): HealthProbe {
  const child = spawn(process.execPath, [SCRIPT, url, String(intervalMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      child.stdin.end();
      await exited;
      const result = JSON.parse(output) as { latencies: number[]; at: number[]; failures: string[] };
      const slowest = result.latencies.indexOf(Math.max(...result.latencies));
      return { latencies: result.latencies.sort((a, b) => a - b), slowestAt: result.at[slowest] ?? 0, failures: result.failures };
    },
  };
}

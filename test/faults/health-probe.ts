import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./health-probe.mjs', import.meta.url));

export interface HealthProbe {
  /** Stops probing; the latencies of the answers (ms, sorted) and the probes that failed. */
  stop(): Promise<{ latencies: number[]; failures: string[] }>;
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
      const result = JSON.parse(output) as { latencies: number[]; failures: string[] };
      return { latencies: result.latencies.sort((a, b) => a - b), failures: result.failures };
    },
  };
}

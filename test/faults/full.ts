/**
 * `npm run test:faults` sets EXTSCOPE_FAULTS_FULL=1: the scenarios run at full length. Under `npm test` each runs a
 * shorter but real version (same assertions, fewer rounds), so that it fits CI's time.
 */
export const FULL = process.env.EXTSCOPE_FAULTS_FULL === '1';

export function pick<T>(short: T, full: T): T {
  return FULL ? full : short;
}

/** Peak and current RSS of a process, in MB (Linux /proc). */
export async function rssOf(pid: number): Promise<{ rss: number; peak: number }> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

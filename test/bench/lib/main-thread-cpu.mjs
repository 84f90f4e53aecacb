import { readFileSync } from 'node:fs';

/**
 * CPU time of this process's main thread so far, in microseconds (Linux: the thread's schedstat), or `undefined`
 * where that is not readable. `process.cpuUsage()` counts every thread; the difference is V8's helper threads
 * (parallel and concurrent garbage collection, compilation), which on this workload are a quarter of the CPU.
 */
export function mainThreadMicros() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return undefined;
  }
}

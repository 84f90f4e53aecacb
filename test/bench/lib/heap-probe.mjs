// Preloaded into a benchmark's collector child (`--import`, BENCH_HEAP_DIR): what its main thread allocates and how
// often V8 collects, over the part of the run the parent marks. Allocation is sampled by V8's sampling heap profiler
// with the objects already collected kept in the profile, so its total estimates every byte allocated, not what
// survives; the profile is written to BENCH_HEAP_DIR (open it in Chrome's DevTools, Memory tab) for where it was
// allocated. The parent starts and stops it over the child's IPC channel (`heapStart` / `heapStop` in
// collector-child.mjs). BENCH_HEAP_CPU=1: a CPU profile of the main thread over the same rounds is written beside it
// (BENCH_PROFILE_DIR profiles the collector's whole life, its warm-up round and shutdown included).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
const session = new Session();
session.connect();
let collections = {};
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind] ?? 'other';
    const seen = (collections[kind] ??= { count: 0, ms: 0 });
    seen.count++;
    seen.ms += entry.duration;
  }
});

/** CPU seconds of this process's threads so far, by thread name (the main thread under 'main'), from /proc. */
function threadSeconds() {
  const byName = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = Number(tid) === process.pid ? 'main' : readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      byName[name] = (byName[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // Gone meanwhile.
    }
  }
  return byName;
}
let threadsAtStart = {};

/** The session's messages to this thread are answered synchronously. */
function post(method, params) {
  let answer;
  session.post(method, params, (error, result) => {
    if (error) throw error;
    answer = result;
  });
  return answer;
}

process.on('message', (message) => {
  if (message === 'heap-start') {
    collections = {};
    threadsAtStart = threadSeconds();
    observer.observe({ entryTypes: ['gc'] });
    post('HeapProfiler.enable');
    // BENCH_HEAP_SURVIVORS=1: only what outlived a scavenge (promoted to the old generation, which full collections
    // then have to mark), by where it was allocated.
    const survivors = process.env.BENCH_HEAP_SURVIVORS === '1';
    post('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !survivors });
    if (process.env.BENCH_HEAP_CPU === '1') {
      post('Profiler.enable');
      post('Profiler.start');
    }
    process.send?.({ heapStarted: true });
  } else if (message === 'heap-stop') {
    const { profile } = post('HeapProfiler.stopSampling');
    if (process.env.BENCH_HEAP_CPU === '1')
      writeFileSync(join(process.env.BENCH_HEAP_DIR ?? '.', `collector-${process.pid}.cpuprofile`), JSON.stringify(post('Profiler.stop').profile));
    const threads = Object.fromEntries(Object.entries(threadSeconds()).map(([name, seconds]) => [name, seconds - (threadsAtStart[name] ?? 0)]));
    observer.disconnect();
    let allocated = 0;
    const walk = (node) => {
      allocated += node.selfSize;
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    // What stays reachable: each full collection marks all of it (on V8's helper threads, mostly).
    post('HeapProfiler.collectGarbage');
    const live = getHeapStatistics().used_heap_size;
    writeFileSync(join(process.env.BENCH_HEAP_DIR ?? '.', `collector-${process.pid}.heapprofile`), JSON.stringify(profile));
    process.send?.({ heap: { allocated, live, collections, threads } });
  }
});
// The channel must not keep the collector alive once it is told to stop.
process.channel?.unref();

// Preloaded into a collector child (`node --import ./loop-probe.mjs …`): measures its event loop and, on
// SIGUSR2, prints what it saw since the last report as one JSON line on stdout, then starts again.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
// A 1 ms timer: the longest gap between two of its callbacks is the longest time nothing else could run.
let last = performance.now();
let longestGap = 0;
/** When the longest gap ended, in µs of the monotonic clock (as CPU profiles count time). */
let longestGapEndUs = 0;
const tick = () => {
  const now = performance.now();
  if (now - last > longestGap) {
    longestGap = now - last;
    longestGapEndUs = Number(process.hrtime.bigint() / 1000n);
  }
  last = now;
  setTimeout(tick, 1).unref();
};
setTimeout(tick, 1).unref();

process.on('SIGUSR2', () => {
  const ms = (ns) => Number(ns) / 1e6;
  const report = {
    loopProbe: {
      maxMs: ms(histogram.max),
      p99Ms: ms(histogram.percentile(99)),
      p50Ms: ms(histogram.percentile(50)),
      longestGapMs: longestGap,
      longestGapEndUs,
    },
  };
  histogram.reset();
  longestGap = 0;
  longestGapEndUs = 0;
  process.stdout.write(`${JSON.stringify(report)}\n`);
});

// Probes a URL (the collector's /healthz) every INTERVAL ms from a process of its own, so that the latencies seen
// are the collector's and not those of a busy test process; prints them as JSON when its stdin closes.
import { request } from 'node:http';

const [url, interval = '50'] = process.argv.slice(2);
const latencies = [];
/** When each answered probe started (ms since the epoch), in the order of `latencies`. */
const at = [];
const failures = [];
let stopped = false;
process.stdin.on('end', () => (stopped = true));
process.stdin.resume();

const probe = () =>
  new Promise((resolve) => {
    const start = performance.now();
    const req = request(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => {
        if (response.statusCode === 200) {
          latencies.push(performance.now() - start);
          at.push(Date.now() - (performance.now() - start));
        } else failures.push(`HTTP ${response.statusCode}`);
        resolve();
      });
    });
    req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', (error) => {
      failures.push(error.message);
      resolve();
    });
    req.end();
  });

while (!stopped) {
  await probe();
  await new Promise((resolve) => setTimeout(resolve, Number(interval)));
}
process.stdout.write(JSON.stringify({ latencies, at, failures }));

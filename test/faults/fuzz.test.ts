import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRIC_REQUESTS } from '../../contract/index.js';
import { type ChildCollector, matrix, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { DELTA, type Json, MINUTE_NS, decodeMetrics, encodeMetrics, extensionPoint, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { pick, rssOf } from './full.js';

/**
 * Malformed OTLP bodies: random mutations of valid protobuf and JSON exports, truncations, deep nesting, gzip
 * bombs and broken gzip, wrong headers. Every body is answered 4xx, or 200 when it is still a valid export; what
 * the accepted ones carried is exactly what the matrix holds. Replay a failure with EXTSCOPE_FUZZ_SEED.
 */

const BODIES = pick(1_500, 12_000);
const SEED = Number(process.env.EXTSCOPE_FUZZ_SEED ?? 20261201);
const CONCURRENCY = 8;
/** Instances the valid bodies come from, in turn. */
const INSTANCES = 64;
/**
 * Memory grows for about the first quarter of the run (gzip bombs meet the decompression budget, the SQLite page
 * cache fills); after that it is flat, give or take the steps in which V8 and malloc grow and shrink their heaps
 * (seen: ±45 MB of RSS from one tenth of the run to the next). So two bounds: the JavaScript heap capped (the
 * process would die if state grew with the bodies sent), and RSS within this of what it was after the warm-up.
 */
const RSS_SLACK_MB = 64;
const HEAP_CAP_MB = 64;
const WARMUP_SHARE = 0.3;

/** mulberry32: small, seedable, good enough to pick mutations. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Body {
  kind: string;
  body: Buffer;
  headers: Record<string, string>;
}

const PROTOBUF = { 'content-type': 'application/x-protobuf' };
const JSON_TYPE = { 'content-type': 'application/json' };

function send(url: string, agent: Agent, { body, headers }: Body): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/v1/metrics`, { method: 'POST', agent, headers: { ...headers, 'content-length': body.length } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** Points older than the dedup window (6 h by default) are refused within a 200 (partial success). */
const DEDUP_WINDOW_NS = 6n * 60n * MINUTE_NS;

/**
 * The requests a decoded, accepted export adds to the matrix: delta monotonic extscope.requests points with a
 * value, inside the dedup window.
 */
function carried(decoded: Json): number {
  const oldest = msToNs(Date.now()) - DEDUP_WINDOW_NS + MINUTE_NS;
  let total = 0;
  for (const rm of (decoded.resourceMetrics as Json[] | undefined) ?? []) {
    for (const sm of (rm.scopeMetrics as Json[] | undefined) ?? []) {
      for (const metric of (sm.metrics as Json[] | undefined) ?? []) {
        const sum = metric.sum as Json | undefined;
        if (metric.name !== METRIC_REQUESTS || sum === undefined || sum.isMonotonic !== true || sum.aggregationTemporality !== DELTA) continue;
        for (const point of (sum.dataPoints as Json[] | undefined) ?? []) {
          if (((point.flags as number | undefined) ?? 0) & 1) continue;
          if (BigInt(String(point.timeUnixNano ?? 0)) < oldest) continue;
          if (point.asInt !== undefined) total += Number(point.asInt);
        }
      }
    }
  }
  return total;
}

describe('fuzzing the OTLP receiver', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let child: ChildCollector;

  beforeAll(async () => {
    temp = await tempDir();
    // The heap capped: state that grew with the bodies sent would end the process before the run does.
    child = await spawnCollector(join(temp.dir, 'fuzz.db'), [], { NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MB}` });
  });
  afterAll(async () => {
    child.child.kill('SIGKILL');
    await child.exited;
    await temp.cleanup();
  });

  it(
    `${BODIES} malformed bodies: each a 4xx or stored exactly; the process alive, its memory flat after warm-up (heap capped at ${HEAP_CAP_MB} MB, RSS within ${RSS_SLACK_MB} MB)`,
    { timeout: pick(60_000, 900_000) },
    async () => {
      console.log(`[faults] fuzz seed ${SEED} (EXTSCOPE_FUZZ_SEED=${SEED} to replay), ${BODIES} bodies`);
      const next = random(SEED);
      const int = (below: number): number => Math.floor(next() * below);
      const t = msToNs(Date.now());
      let sequence = 0;
      const validRequest = (): Json => {
        sequence++;
        const count = (sequence % 9) + 1;
        // A window of its own per export: a mutation that renames one export's instance into another's must not
        // make it a retry of that one (same stream and window: counted once, by design). A fixed set of instances:
        // each new instance is state the collector keeps (rows, caches, the SQLite page cache), so with one per
        // export memory grows with the database (about 4 MB per 1,000 instances), not with the bodies sent.
        const end = t - BigInt(sequence) * 1000n;
        return metricsRequest({
          resource: { service: 'fuzz', instance: `f-${sequence % INSTANCES}` },
          temporality: DELTA,
          requests: [requestPoint({ client: `c-${sequence % 5}`, count, startNs: end - MINUTE_NS, timeNs: end })],
          extensions: [
            extensionPoint({
              client: `c-${sequence % 5}`,
              count,
              startNs: end - MINUTE_NS,
              timeNs: end,
              id: 'io.x/y',
              clientDeclared: true,
              serverDeclared: false,
            }),
          ],
        });
      };
      const mutateBytes = (bytes: Buffer): Buffer => {
        const copy = Buffer.from(bytes);
        const edits = 1 + int(4);
        for (let edit = 0; edit < edits; edit++) {
          const at = int(copy.length);
          switch (int(4)) {
            case 0:
              copy[at] = int(256);
              break;
            case 1:
              copy[at] = (copy[at] ?? 0) ^ (1 << int(8));
              break;
            case 2:
              copy[at] = 0xff;
              break;
            default:
              copy[at] = 0;
          }
        }
        return copy;
      };
      // Inflating past the 32 MiB per-export limit; built once (compressing 40 MB takes a while).
      const bombs = [33, 40, 64].map((mb) => gzipSync(Buffer.alloc(mb * 1024 * 1024)));
      const deep = (depth: number, json: boolean): Buffer => {
        if (json) return Buffer.from(`{"resourceMetrics":[${'{"resource":{"attributes":[{"key":"k","value":{"kvlistValue":{"values":['.repeat(depth)}]}}]}}]}`);
        // Nested AnyValue.kvlist_value: field 6 of AnyValue, KeyValue.value (2), KeyValueList.values (1)…
        let inner: Buffer = Buffer.alloc(0);
        for (let level = 0; level < depth; level++) {
          const lengthPrefix = (value: Buffer, field: number): Buffer => {
            const varint: number[] = [];
            let n = value.length;
            do {
              varint.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
              n >>>= 7;
            } while (n > 0);
            return Buffer.concat([Buffer.from([(field << 3) | 2]), Buffer.from(varint), value]);
          };
          inner = lengthPrefix(inner, 1 + (level % 3));
        }
        return inner;
      };
      const generate = (): { body: Body; original: number | undefined } => {
        const request = validRequest();
        const protobuf = encodeMetrics(request);
        const json = Buffer.from(JSON.stringify(request));
        switch (int(12)) {
          case 0:
            return { body: { kind: 'valid protobuf', body: protobuf, headers: PROTOBUF }, original: carried(request) };
          case 1:
          case 2:
          case 3:
            return { body: { kind: 'mutated protobuf', body: mutateBytes(protobuf), headers: PROTOBUF }, original: undefined };
          case 4:
            return { body: { kind: 'truncated protobuf', body: protobuf.subarray(0, int(protobuf.length)), headers: PROTOBUF }, original: undefined };
          case 5:
            return { body: { kind: 'mutated JSON', body: mutateBytes(json), headers: JSON_TYPE }, original: undefined };
          case 6:
            return { body: { kind: 'truncated JSON', body: json.subarray(0, int(json.length)), headers: JSON_TYPE }, original: undefined };
          case 7: {
            const text = json
              .toString()
              .replace(/"asInt":"\d+"/, `"asInt":"${['18446744073709551621', '-1', '1.5', '1e3', 'NaN', '99999999999999999999'][int(6)]}"`);
            return { body: { kind: 'bad JSON integer', body: Buffer.from(text), headers: JSON_TYPE }, original: undefined };
          }
          case 8:
            return {
              body: { kind: 'deep nesting', body: deep(100 + int(5000), next() < 0.5), headers: next() < 0.5 ? JSON_TYPE : PROTOBUF },
              original: undefined,
            };
          case 9: {
            const bomb = bombs[int(bombs.length)] as Buffer;
            return { body: { kind: 'gzip bomb', body: bomb, headers: { ...PROTOBUF, 'content-encoding': 'gzip' } }, original: undefined };
          }
          case 10: {
            const gz = gzipSync(protobuf);
            return {
              body: {
                kind: 'broken gzip',
                body: mutateBytes(gz.subarray(0, Math.max(1, int(gz.length)))),
                headers: { ...PROTOBUF, 'content-encoding': 'gzip' },
              },
              original: undefined,
            };
          }
          default: {
            const headers = [
              { 'content-type': 'text/plain' },
              { 'content-type': 'application/x-protobuf', 'content-encoding': 'br' },
              { 'content-type': 'application/json' },
              { 'content-type': 'application/x-protobuf; charset=utf-8', 'content-encoding': 'gzip' },
              { 'content-type': 'multipart/form-data; boundary=x' },
            ][int(5)] as Record<string, string>;
            return { body: { kind: 'wrong headers', body: next() < 0.5 ? protobuf : json, headers }, original: undefined };
          }
        }
      };

      const agents = Array.from({ length: CONCURRENCY }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
      const byKind = new Map<string, Map<number, number>>();
      const unexpected: string[] = [];
      let expected = 0;
      let acceptedMutations = 0;
      let warmRss = 0;
      /** RSS after each further tenth of the run. */
      const later: number[] = [];
      const started = performance.now();
      const warmup = Math.floor(BODIES * WARMUP_SHARE);
      for (let done = 0; done < BODIES; done += CONCURRENCY) {
        const batch = Array.from({ length: Math.min(CONCURRENCY, BODIES - done) }, generate);
        const answers = await Promise.all(batch.map(({ body }, index) => send(child.url, agents[index]!, body)));
        answers.forEach(({ status, text }, index) => {
          const { body, original } = batch[index]!;
          const counts = byKind.get(body.kind) ?? new Map<number, number>();
          counts.set(status, (counts.get(status) ?? 0) + 1);
          byKind.set(body.kind, counts);
          if (status === 200) {
            if (original !== undefined) expected += original;
            else {
              acceptedMutations++;
              const plain = body.headers['content-encoding'] === 'gzip' ? null : body.body;
              if (plain === null) unexpected.push(`${body.kind}: accepted a gzip body that should not decode`);
              else
                expected += body.headers['content-type'] === 'application/json' ? carried(JSON.parse(plain.toString()) as Json) : carried(decodeMetrics(plain));
            }
          } else if (status === 503) {
            // Only the decompression budget may say "later"; gzip bombs in a burst can meet it.
            if (body.kind !== 'gzip bomb') unexpected.push(`${body.kind}: 503 ${text}`);
          } else if (status < 400 || status >= 500) unexpected.push(`${body.kind}: ${status} ${text.slice(0, 200)}`);
        });
        if (done < warmup && done + CONCURRENCY >= warmup) warmRss = (await rssOf(child.child.pid as number)).rss;
        else if (done > warmup && Math.floor(done / (BODIES / 10)) !== Math.floor((done + CONCURRENCY) / (BODIES / 10)))
          later.push((await rssOf(child.child.pid as number)).rss);
      }
      for (const agent of agents) agent.destroy();
      const end = await rssOf(child.child.pid as number);
      const health = await fetch(`${child.url}/healthz`);
      // All services: a mutation may have changed the service name.
      const view = await matrix(child.url);
      const stored = view.rows.reduce((sum, row) => sum + row.requests, 0);
      const summary = [...byKind]
        .map(
          ([kind, counts]) =>
            `${kind} ${[...counts]
              .sort()
              .map(([status, n]) => `${status}×${n}`)
              .join(' ')}`,
        )
        .join('; ');
      console.log(`[faults] fuzz ${BODIES} bodies, seed ${SEED}: ${summary}`);
      console.log(
        `[faults] fuzz: ${((performance.now() - started) / 1000).toFixed(1)} s; ${acceptedMutations} mutated bodies still valid and accepted; requests carried ${expected}, stored ${stored}; RSS after warm-up ${warmRss.toFixed(0)} MB, then ${later.map((rss) => rss.toFixed(0)).join(', ')}, at the end ${end.rss.toFixed(0)} MB (peak ${end.peak.toFixed(0)} MB)`,
      );
      expect(unexpected.slice(0, 10)).toEqual([]);
      expect(health.status).toBe(200);
      expect(stored).toBe(expected);
      expect(later.length).toBeGreaterThan(3);
      expect(Math.max(...later, end.rss) - warmRss).toBeLessThan(RSS_SLACK_MB);
    },
  );
});

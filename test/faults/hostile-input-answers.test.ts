import { connect } from 'node:http2';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matrixMarkdown, sliceMatrix } from '../../dashboard/src/lib/matrix-model.js';
import type { MatrixResponse } from '../../dashboard/src/lib/types.js';
import { type TestCollector, matrixAnswer, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, encodeMetrics, extensionPoint, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { METRICS_EXPORT } from '../collector/receiver/otlp-grpc/helpers.js';

/**
 * What a hostile sender gets back, and what it can make the collector's exports say. Before: a gRPC message
 * flagged gzip that was not gzip was answered INTERNAL (a server fault, which senders may retry) where the docs
 * and OTLP/HTTP say INVALID_ARGUMENT; and a client named with a URL was left bare in the Markdown export, where
 * GitHub turns it into a link.
 */

/** A raw HTTP/2 gRPC call whose one message carries the compressed flag with `payload` (not necessarily gzip). */
async function compressedCall(address: string, payload: Buffer): Promise<{ status: number; message: string }> {
  const session = connect(`http://${address}`);
  try {
    const stream = session.request({ ':method': 'POST', ':path': METRICS_EXPORT, 'content-type': 'application/grpc', te: 'trailers', 'grpc-encoding': 'gzip' });
    const frame = Buffer.alloc(5 + payload.length);
    frame.writeUInt8(1, 0);
    frame.writeUInt32BE(payload.length, 1);
    payload.copy(frame, 5);
    stream.end(frame);
    stream.resume();
    return await new Promise((resolve, reject) => {
      let headers: Record<string, unknown> = {};
      stream.on('response', (received) => (headers = received));
      stream.on('trailers', (trailers) =>
        resolve({ status: Number(trailers['grpc-status']), message: decodeURIComponent(String(trailers['grpc-message'] ?? '')) }),
      );
      // A trailers-only answer comes as the response headers.
      stream.on('end', () => resolve({ status: Number(headers['grpc-status']), message: decodeURIComponent(String(headers['grpc-message'] ?? '')) }));
      stream.on('error', reject);
    });
  } finally {
    session.close();
  }
}

async function sample(url: string, line: RegExp): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(`^${line.source} (\\d+)$`, 'm').exec(text);
  return match === null ? 0 : Number(match[1]);
}

describe('answers to hostile input', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  beforeEach(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir);
  });
  afterEach(async () => {
    await collector.close();
    await temp.cleanup();
  });

  it('a gRPC message flagged gzip that is not gzip is INVALID_ARGUMENT, counted as refused (bad_gzip), its slot given back', async () => {
    const address = collector.grpcAddress as string;
    const answer = await compressedCall(address, Buffer.from('this is not gzip at all'));
    expect(answer).toEqual({ status: 3, message: 'the message is not valid gzip' });
    expect(await sample(collector.url, /extscope_collector_exports_refused_total\{signal="metrics",reason="bad_gzip",protocol="grpc"\}/)).toBe(1);
    expect(await sample(collector.url, /extscope_collector_exports_in_flight/)).toBe(0);
  });

  it('the Markdown export escapes client names so that GitHub autolinks none of them, and they read the same', async () => {
    const names = ['https://evil.example/login?next=1', 'www.evil.example', 'support@evil.example', 'mailto:x@evil.example', 'xmpp:x@evil.example'];
    const now = msToNs(Date.now());
    const body = encodeMetrics(
      metricsRequest({
        resource: { instance: 'md-1' },
        requests: names.map((client) => requestPoint({ client, count: 1, startNs: now - MINUTE_NS, timeNs: now })),
        extensions: names.map((client) =>
          extensionPoint({
            client,
            id: 'io.modelcontextprotocol/tasks',
            clientDeclared: true,
            serverDeclared: true,
            count: 1,
            startNs: now - MINUTE_NS,
            timeNs: now,
          }),
        ),
      }),
    );
    expect((await fetch(`${collector.url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body })).status).toBe(200);
    const matrix = await matrixAnswer<MatrixResponse>(collector.url);
    expect(matrix.rows.map((row) => row.client).sort()).toEqual([...names].sort());
    const markdown = matrixMarkdown(
      matrix,
      sliceMatrix(matrix, { rows: '', cols: '', client: '', group: 'client', sort: '', dir: 'asc' }),
      'negotiated',
      'service https://evil.example/scope',
    );
    // GitHub Flavored Markdown, as GitHub renders it (the autolink literal extension included).
    const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });
    expect(html).toContain('<table>');
    expect(html).not.toContain('<a ');
    const text = html.replace(/<[^>]+>/g, '');
    for (const name of names) expect(text).toContain(`${name}¹`);
    expect(text).toContain('(service https://evil.example/scope)');
  });
});

import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getJson, matrix, startTestCollector, tableCount, tempDir } from '../helpers/collector.js';
import { MINUTE_NS, advertisedPoint, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../helpers/otlp.js';

const DAY_MS = 86_400_000;

describe('downsampling and retention', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('minutes go after their window and the hours keep the counts; hours go after theirs, with the silent instances', async () => {
    const dbPath = join(temp.dir, 'retention.db');
    const start = Date.UTC(2026, 0, 10, 12, 30);
    let now = start;
    const options = { dbPath, clock: () => now, retention: { minuteDays: 1, hourDays: 3, dedupHours: 2 } };
    const t = msToNs(start);
    let collector = await startTestCollector(temp.dir, options);
    const request = metricsRequest({
      resource: { service: 'svc', instance: 'old-1' },
      requests: [requestPoint({ client: 'alpha', count: 6, startNs: t - MINUTE_NS, timeNs: t })],
      extensions: [
        extensionPoint({ client: 'alpha', count: 6, startNs: t - MINUTE_NS, timeNs: t, id: 'com.example/a', clientDeclared: true, serverDeclared: true }),
      ],
      advertised: [advertisedPoint({ id: 'com.example/a', fingerprint: 'f', timeNs: t })],
    });
    expect((await postMetrics(collector.url, request)).status).toBe(200);
    await collector.close();
    expect(tableCount(dbPath, 'series_minute')).toBe(2);
    expect(tableCount(dbPath, 'point_log')).toBe(2);

    // Two days later: the minute rollups and the dedup keys are past their windows.
    now = start + 2 * DAY_MS;
    collector = await startTestCollector(temp.dir, options);
    await collector.store.lifecycle.maintain();
    const fromHours = await getJson<{ resolution: string; rows: { requests: number }[] }>(`${collector.url}/api/v1/matrix?from=${start - DAY_MS}&to=${now}`);
    expect(fromHours.body.resolution).toBe('hour');
    expect(fromHours.body.rows.map((row) => row.requests)).toEqual([6]);
    expect((await matrix(collector.url, '&instance=old-1')).rows.map((row) => row.requests)).toEqual([6]);
    // That export is now too old to be applied: refused (partial success), not double counted.
    const retry = await postMetrics(collector.url, request, { format: 'json' });
    expect(((await retry.json()) as { partialSuccess?: { rejectedDataPoints: string } }).partialSuccess?.rejectedDataPoints).toBe('3');
    await collector.close();
    for (const table of ['series_minute', 'cell_minute', 'point_log']) expect(tableCount(dbPath, table), table).toBe(0);
    expect(tableCount(dbPath, 'series_hour')).toBe(2);
    // Cells exist per service and over all services.
    for (const table of ['cell_hour', 'cell_day']) expect(tableCount(dbPath, table), table).toBe(4);

    // Six days after the data (four after the instance's last export, the refused retry) the hourly window
    // has passed for both.
    now = start + 6 * DAY_MS;
    collector = await startTestCollector(temp.dir, options);
    await collector.store.lifecycle.maintain();
    expect((await getJson<{ rows: unknown[] }>(`${collector.url}/api/v1/matrix?from=${start - DAY_MS}&to=${now}`)).body.rows).toEqual([]);
    expect((await getJson<{ instances: unknown[] }>(`${collector.url}/api/v1/instances`)).body.instances).toEqual([]);
    await collector.close();
    for (const table of ['series_hour', 'cell_hour', 'cell_day', 'series', 'streams', 'instances', 'advertised'])
      expect(tableCount(dbPath, table), table).toBe(0);
  });
});

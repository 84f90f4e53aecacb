import type Database from 'better-sqlite3';
import {
  type ApplyResult,
  type CounterPoint,
  type MetricsBatch,
  type ResourceBatch,
  type ResourceIdentity,
  SeriesKind,
  Temporality,
} from '../../processing/points.js';
import { ExportRejection } from '../../processing/rejection.js';
import { CellScope, cellKey, flag, identityHash, instanceKey, seriesKey } from './identity.js';
import { StagedCache, StagedCache2 } from './staged-cache.js';

const NANOS_PER_MINUTE = 60_000_000_000n;
const LOG_COLUMNS = 8;
/** Rows per multi-row insert (8 parameters each, well under SQLite's variable limit). */
const LOG_CHUNK = 256;

interface SeriesRef {
  seriesId: number;
  cellId: number;
  allCellId: number;
}

interface StreamRef extends SeriesRef {
  streamId: number;
}

interface InstanceRow {
  id: number;
  advertised_ms: number | null;
  advertise_gen: number;
}

/**
 * Applies one metrics batch inside the caller's transaction: resolves instances, cells, series and streams,
 * checks the distinct-id limit, turns points into increments exactly once (dedup keys for delta, per-stream
 * state for cumulative) and logs them in `point_log` for the fold; records what each instance advertises.
 * Caches learnt here are staged; the store commits or rolls them back with the transaction.
 */
export class MetricsWriter {
  private readonly streams = new StagedCache2<StreamRef>(200_000);
  /** Multi-row `INSERT OR IGNORE INTO point_log`, by row count (1..LOG_CHUNK). */
  private readonly logInserts = new Map<number, Database.Statement>();
  private readonly series = new StagedCache<SeriesRef>(200_000);
  private readonly cells = new StagedCache<number>(100_000);
  private readonly idsByInstanceHour = new StagedCache<Set<string>>(10_000);
  /** The current transaction's new extension ids per (instance, hour), added to the cached sets on commit. */
  private stagedIds = new Map<string, { known: Set<string>; fresh: Set<string> }>();
  private readonly statements;
  /** True when `point_log` may hold rows not folded yet (also after a restart). */
  pendingRows = true;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number,
    private readonly maxIdsPerInstanceHour: number,
  ) {
    this.statements = {
      upsertInstance: db.prepare(`
        INSERT INTO instances (key_hash, service, instance_id, service_version, host, server_name, server_version, first_seen_ms, last_seen_ms)
        VALUES (@hash, @service, @instanceId, @serviceVersion, @host, @serverName, @serverVersion, @now, @now)
        ON CONFLICT (key_hash) DO UPDATE SET
          service_version = coalesce(excluded.service_version, service_version),
          host = coalesce(excluded.host, host),
          server_name = coalesce(excluded.server_name, server_name),
          server_version = coalesce(excluded.server_version, server_version),
          last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)
        RETURNING id, advertised_ms, advertise_gen`),
      setAdvertised: db.prepare('UPDATE instances SET advertised_ms = ?, advertise_gen = ? WHERE id = ?'),
      selectStream: db.prepare(
        'SELECT s.id AS streamId, s.series_id AS seriesId, r.cell_id AS cellId, r.all_cell_id AS allCellId FROM streams s JOIN series r ON r.id = s.series_id WHERE s.key_hash = ?',
      ),
      insertStream: db.prepare('INSERT INTO streams (key_hash, series_id, temporality) VALUES (?, ?, ?)'),
      selectSeries: db.prepare('SELECT id AS seriesId, cell_id AS cellId, all_cell_id AS allCellId FROM series WHERE key_hash = ?'),
      insertSeries: db.prepare(`
        INSERT INTO series (key_hash, instance_ref, cell_id, all_cell_id, kind, server_name, server_version, method, era, protocol_version,
          client_name, client_version, client_declaration, server_declaration, outcome, status_code,
          extension_id, client_declared, server_declared, negotiated, required)
        VALUES (@hash, @instanceRef, @cellId, @allCellId, @kind, @serverName, @serverVersion, @method, @era, @protocolVersion,
          @clientName, @clientVersion, @clientDeclaration, @serverDeclaration, @outcome, @statusCode,
          @extensionId, @clientDeclared, @serverDeclared, @negotiated, @required)`),
      selectCell: db.prepare('SELECT id FROM cells WHERE key_hash = ?').pluck(),
      insertCell: db.prepare(`
        INSERT INTO cells (key_hash, scope, kind, service, client_name, client_version, client_declaration, extension_id, client_declared, server_declared, negotiated)
        VALUES (@hash, @scope, @kind, @service, @clientName, @clientVersion, @clientDeclaration, @extensionId, @clientDeclared, @serverDeclared, @negotiated)`),
      selectCumulative: db.prepare('SELECT end_ns AS endNs, value FROM cumulative_state WHERE stream_id = ? AND start_ns = ?').safeIntegers(true),
      upsertCumulative: db.prepare(`
        INSERT INTO cumulative_state (stream_id, start_ns, end_ns, value) VALUES (?, ?, ?, ?)
        ON CONFLICT (stream_id, start_ns) DO UPDATE SET end_ns = excluded.end_ns, value = excluded.value`),
      selectInstanceHourIds: db.prepare('SELECT extension_id FROM instance_extension_hours WHERE instance_ref = ? AND hour = ?').pluck(),
      insertInstanceHourId: db.prepare('INSERT OR IGNORE INTO instance_extension_hours (instance_ref, hour, extension_id) VALUES (?, ?, ?)'),
      upsertAdvertised: db.prepare(`
        INSERT INTO advertised (instance_ref, server_name, server_version, extension_id, fingerprint, first_seen_ms, last_seen_ms, last_gen)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (instance_ref, server_name, server_version, extension_id, fingerprint) DO UPDATE SET
          first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
          last_seen_ms = max(last_seen_ms, excluded.last_seen_ms),
          last_gen = max(last_gen, excluded.last_gen)`),
      upsertAdvertisedCount: db.prepare(`
        INSERT INTO advertised_counts (instance_ref, server_name, server_version, count, first_seen_ms, last_seen_ms, last_gen)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (instance_ref, server_name, server_version) DO UPDATE SET
          count = CASE WHEN excluded.last_gen >= last_gen THEN excluded.count ELSE count END,
          first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
          last_seen_ms = max(last_seen_ms, excluded.last_seen_ms),
          last_gen = max(last_gen, excluded.last_gen)`),
    };
  }

  /** Must run inside a transaction. */
  apply(batch: MetricsBatch): ApplyResult {
    const result: ApplyResult = { applied: 0, duplicates: 0 };
    const now = this.clock();
    for (const resourceBatch of batch.resources) this.applyResource(resourceBatch, now, result);
    return result;
  }

  commit(): void {
    this.streams.commit();
    this.series.commit();
    this.cells.commit();
    this.idsByInstanceHour.commit();
    for (const { known, fresh } of this.stagedIds.values()) for (const id of fresh) known.add(id);
    this.stagedIds.clear();
  }

  rollback(): void {
    this.streams.rollback();
    this.series.rollback();
    this.cells.rollback();
    this.idsByInstanceHour.rollback();
    this.stagedIds.clear();
  }

  /** After retention deleted rows that caches may point at. */
  forget(): void {
    this.streams.clear();
    this.series.clear();
    this.cells.clear();
    this.idsByInstanceHour.clear();
  }

  private applyResource(batch: ResourceBatch, now: number, result: ApplyResult): void {
    const { resource } = batch;
    const instance = this.statements.upsertInstance.get({
      hash: identityHash(instanceKey(resource)),
      service: resource.service,
      instanceId: resource.instanceId,
      serviceVersion: resource.serviceVersion,
      host: resource.host,
      serverName: resource.serverName,
      serverVersion: resource.serverVersion,
      now,
    }) as InstanceRow;
    this.checkExtensionIds(instance.id, resource, batch.counters);

    // Log rows, 8 values each: end, stream, start, minute, series, cell, all-services cell, increment.
    const rows: (bigint | number)[] = [];
    let deltaRows = 0;
    for (const point of batch.counters) {
      if (point.temporality === Temporality.Delta) {
        // A zero increment changes nothing, so it needs neither a stream nor a log row.
        if (point.value === 0) continue;
        const stream = this.stream(instance.id, resource, point);
        rows.push(point.timeNs, stream.streamId, point.startNs, Number(point.timeNs / NANOS_PER_MINUTE), stream.seriesId, stream.cellId, stream.allCellId, point.value);
        deltaRows++;
      } else {
        const stream = this.stream(instance.id, resource, point);
        const increment = this.cumulativeIncrement(stream, point);
        if (increment === undefined) {
          result.duplicates++;
          continue;
        }
        result.applied++;
        if (increment > 0) {
          // Its identity is unique too (the state only moves forward), so it cannot collide in the log.
          rows.push(point.timeNs, stream.streamId, point.startNs, Number(point.timeNs / NANOS_PER_MINUTE), stream.seriesId, stream.cellId, stream.allCellId, increment);
        }
      }
    }
    // A delta point already in the log (a retry) is ignored by the unique identity index: applied once, ever.
    const cumulativeRows = rows.length / LOG_COLUMNS - deltaRows;
    const deltaInserted = this.insertLog(rows) - cumulativeRows;
    result.applied += deltaInserted;
    result.duplicates += deltaRows - deltaInserted;
    if (batch.advertised.length > 0 || batch.advertisedCounts.length > 0) this.applyAdvertised(instance, batch);
  }

  /** Inserts log rows in multi-row statements; returns how many were new. */
  private insertLog(rows: readonly (bigint | number)[]): number {
    let inserted = 0;
    for (let offset = 0; offset < rows.length; offset += LOG_CHUNK * LOG_COLUMNS) {
      const chunk = rows.slice(offset, offset + LOG_CHUNK * LOG_COLUMNS);
      const count = chunk.length / LOG_COLUMNS;
      let statement = this.logInserts.get(count);
      if (statement === undefined) {
        const values = Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
        statement = this.db.prepare(`INSERT OR IGNORE INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value) VALUES ${values}`);
        this.logInserts.set(count, statement);
      }
      inserted += statement.run(chunk).changes;
    }
    if (inserted > 0) this.pendingRows = true;
    return inserted;
  }

  /**
   * Cumulative → increment, per stream and start time (one state row per sender incarnation, so a late point
   * from before a restart still lands against its own baseline). A new start time counts from zero; a value
   * below the last one under the same start is a reset and also counts from zero; a point not newer than the
   * state is a retry or out of order and adds nothing (`undefined`: the newer total already includes it).
   */
  private cumulativeIncrement(stream: StreamRef, point: CounterPoint): number | undefined {
    const state = this.statements.selectCumulative.get(stream.streamId, point.startNs) as { endNs: bigint; value: bigint } | undefined;
    let increment: number;
    if (state === undefined) increment = point.value;
    else if (point.timeNs <= state.endNs) return undefined;
    else {
      const last = Number(state.value);
      increment = point.value >= last ? point.value - last : point.value;
    }
    this.statements.upsertCumulative.run(stream.streamId, point.startNs, point.timeNs, point.value);
    return increment;
  }

  /** Refuses the export when an instance would exceed the distinct extension ids allowed in one hour. */
  private checkExtensionIds(instanceRef: number, resource: ResourceIdentity, counters: readonly CounterPoint[]): void {
    let byHour: Map<number, Set<string>> | undefined;
    for (const point of counters) {
      if (point.dims.kind !== SeriesKind.Extension || point.dims.extensionId === null) continue;
      const hour = Number(point.timeNs / (NANOS_PER_MINUTE * 60n));
      byHour ??= new Map();
      let ids = byHour.get(hour);
      if (ids === undefined) byHour.set(hour, (ids = new Set()));
      ids.add(point.dims.extensionId);
    }
    if (byHour === undefined) return;
    for (const [hour, ids] of byHour) {
      const key = `${instanceRef}:${hour}`;
      let known = this.idsByInstanceHour.get(key);
      if (known === undefined) {
        known = new Set(this.statements.selectInstanceHourIds.all(instanceRef, hour) as string[]);
        this.idsByInstanceHour.stage(key, known);
      }
      let staged = this.stagedIds.get(key);
      if (staged === undefined) this.stagedIds.set(key, (staged = { known, fresh: new Set() }));
      const fresh = [...ids].filter((id) => !known.has(id) && !staged.fresh.has(id));
      if (fresh.length === 0) continue;
      const total = known.size + staged.fresh.size + fresh.length;
      if (total > this.maxIdsPerInstanceHour) {
        throw new ExportRejection(
          `instance ${JSON.stringify(resource.instanceId)} of service ${JSON.stringify(resource.service)} would report ` +
            `${total} distinct extension ids in the hour starting ${new Date(hour * 3_600_000).toISOString()}; ` +
            `the limit is ${this.maxIdsPerInstanceHour}`,
          'too_many_extension_ids',
        );
      }
      for (const id of fresh) {
        this.statements.insertInstanceHourId.run(instanceRef, hour, id);
        staged.fresh.add(id);
      }
    }
  }

  private stream(instanceRef: number, resource: ResourceIdentity, point: CounterPoint): StreamRef {
    const cached = this.streams.get(point.streamScope, point.streamAttributes);
    if (cached !== undefined) return cached;
    const hash = identityHash(`${point.streamScope}\u0001${point.streamAttributes}`);
    let stream = this.statements.selectStream.get(hash) as StreamRef | undefined;
    if (stream === undefined) {
      const series = this.seriesFor(instanceRef, resource, point);
      const streamId = Number(this.statements.insertStream.run(hash, series.seriesId, point.temporality).lastInsertRowid);
      stream = { streamId, ...series };
    }
    this.streams.stage(point.streamScope, point.streamAttributes, stream);
    return stream;
  }

  private seriesFor(instanceRef: number, resource: ResourceIdentity, point: CounterPoint): SeriesRef {
    const key = seriesKey(instanceRef, point.dims);
    const cached = this.series.get(key);
    if (cached !== undefined) return cached;
    const hash = identityHash(key);
    let found = this.statements.selectSeries.get(hash) as SeriesRef | undefined;
    if (found === undefined) {
      const cellId = this.cellFor(CellScope.Service, resource.service, point);
      const allCellId = this.cellFor(CellScope.AllServices, null, point);
      const { dims } = point;
      const seriesId = Number(
        this.statements.insertSeries.run({
          hash,
          instanceRef,
          cellId,
          allCellId,
          kind: dims.kind,
          serverName: dims.serverName,
          serverVersion: dims.serverVersion,
          method: dims.method,
          era: dims.era,
          protocolVersion: dims.protocolVersion,
          clientName: dims.clientName,
          clientVersion: dims.clientVersion,
          clientDeclaration: dims.clientDeclaration,
          serverDeclaration: dims.serverDeclaration,
          outcome: dims.outcome,
          statusCode: dims.statusCode,
          extensionId: dims.extensionId,
          clientDeclared: flag(dims.clientDeclared),
          serverDeclared: flag(dims.serverDeclared),
          negotiated: flag(dims.negotiated),
          required: flag(dims.required),
        }).lastInsertRowid,
      );
      found = { seriesId, cellId, allCellId };
    }
    this.series.stage(key, found);
    return found;
  }

  private cellFor(scope: CellScope, service: string | null, point: CounterPoint): number {
    const key = cellKey(scope, service, point.dims);
    const cached = this.cells.get(key);
    if (cached !== undefined) return cached;
    const hash = identityHash(key);
    let id = this.statements.selectCell.get(hash) as number | undefined;
    if (id === undefined) {
      const { dims } = point;
      const extension = dims.kind === SeriesKind.Extension;
      id = Number(
        this.statements.insertCell.run({
          hash,
          scope,
          kind: dims.kind,
          service,
          clientName: dims.clientName,
          clientVersion: dims.clientVersion,
          clientDeclaration: extension ? null : dims.clientDeclaration,
          extensionId: dims.extensionId,
          clientDeclared: flag(dims.clientDeclared),
          serverDeclared: flag(dims.serverDeclared),
          negotiated: flag(dims.negotiated),
        }).lastInsertRowid,
      );
    }
    this.cells.stage(key, id);
    return id;
  }

  /**
   * Advertisement generations: a gauge collection newer than the last one starts a new generation, and the
   * rows it touches are what the instance advertises now. Points of the same collection time (an export split
   * by a forwarding collector) join the current generation; older ones only widen first/last seen.
   */
  private applyAdvertised(instance: InstanceRow, batch: ResourceBatch): void {
    let newest = Number.NEGATIVE_INFINITY;
    for (const point of batch.advertised) newest = Math.max(newest, point.timeMs);
    for (const point of batch.advertisedCounts) newest = Math.max(newest, point.timeMs);
    let generation = instance.advertise_gen;
    if (instance.advertised_ms === null || newest > instance.advertised_ms) {
      generation++;
      this.statements.setAdvertised.run(newest, generation, instance.id);
    }
    const currentMs = Math.max(newest, instance.advertised_ms ?? newest);
    const genFor = (timeMs: number): number => (timeMs >= currentMs ? generation : 0);
    for (const point of batch.advertised) {
      this.statements.upsertAdvertised.run(
        instance.id,
        point.serverName ?? '',
        point.serverVersion ?? '',
        point.extensionId,
        point.fingerprint ?? '',
        point.timeMs,
        point.timeMs,
        genFor(point.timeMs),
      );
    }
    for (const point of batch.advertisedCounts) {
      this.statements.upsertAdvertisedCount.run(
        instance.id,
        point.serverName ?? '',
        point.serverVersion ?? '',
        point.count,
        point.timeMs,
        point.timeMs,
        genFor(point.timeMs),
      );
    }
  }
}

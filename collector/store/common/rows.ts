/**
 * Rows as both backends' tables hold them (the same columns in SQLite and PostgreSQL), and the records they become:
 * one mapping per table, so the two stores cannot drift apart in what they answer.
 */
import type { Alert, AlertState, AlertTransition } from '../../model/alerts.js';
import type { AdvertisedCountRecord, AdvertisedRecord, ExampleRecord, InstanceRecord } from '../../model/records.js';
import { buildKey } from '../../model/build.js';
import { INSTANCE_COLUMNS } from './columns.js';
import type { DeliveryRecord, DeliveryState } from '../store.js';

export interface ExampleRow {
  service: string | null;
  instance_id: string | null;
  trace_id: string;
  span_id: string;
  name: string;
  method: string | null;
  outcome: string | null;
  status_code: string | null;
  client_name: string | null;
  client_version: string | null;
  client_declaration: string | null;
  start_ms: number;
  duration_ms: number;
  client_extensions: string;
  server_extensions: string;
  negotiated: string;
  required: string;
}

export function exampleRecord(row: ExampleRow): ExampleRecord {
  return {
    service: row.service,
    instanceId: row.instance_id,
    traceId: row.trace_id,
    spanId: row.span_id,
    name: row.name,
    method: row.method,
    outcome: row.outcome,
    statusCode: row.status_code,
    clientName: row.client_name,
    clientVersion: row.client_version,
    clientDeclaration: row.client_declaration,
    startMs: row.start_ms,
    durationMs: row.duration_ms,
    clientExtensions: JSON.parse(row.client_extensions) as string[],
    serverExtensions: JSON.parse(row.server_extensions) as string[],
    negotiated: JSON.parse(row.negotiated) as string[],
    required: JSON.parse(row.required) as string[],
  };
}

export interface AlertRow {
  fingerprint: string;
  active_since_ms: number;
  rule: string;
  kind: Alert['kind'];
  severity: Alert['severity'];
  state: AlertState;
  labels: string;
  annotations: string;
  firing_since_ms: number | null;
  resolved_at_ms: number | null;
  dashboard_path: string;
}

export interface TransitionRow {
  fingerprint: string;
  active_since_ms: number;
  from_state: AlertTransition['from'];
  to_state: AlertState;
  at_ms: number;
}

export function alertRecord(row: AlertRow): Alert {
  return {
    fingerprint: row.fingerprint,
    rule: row.rule,
    kind: row.kind,
    severity: row.severity,
    state: row.state,
    labels: JSON.parse(row.labels) as Record<string, string>,
    annotations: JSON.parse(row.annotations) as Record<string, string>,
    activeSinceMs: row.active_since_ms,
    firingSinceMs: row.firing_since_ms ?? undefined,
    resolvedAtMs: row.resolved_at_ms ?? undefined,
    dashboardPath: row.dashboard_path,
  };
}

export interface DeliveryRow {
  receiver: string;
  transition_id: string;
  fingerprint: string;
  rule: string;
  from_state: string;
  to_state: string;
  state: DeliveryState;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at_ms: number;
  updated_at_ms: number;
  next_attempt_at_ms: number | null;
  delivered_at_ms: number | null;
  body?: string | null;
}

/** Longest error text kept per delivery row: a receiver's error says what happened, it is not stored whole. */
export const MAX_DELIVERY_ERROR_LENGTH = 500;

export function deliveryRecord(row: DeliveryRow): DeliveryRecord {
  return {
    receiver: row.receiver,
    transitionId: row.transition_id,
    fingerprint: row.fingerprint,
    rule: row.rule,
    from: row.from_state,
    to: row.to_state,
    state: row.state,
    attempts: row.attempts,
    lastStatus: row.last_status ?? undefined,
    lastError: row.last_error ?? undefined,
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
    nextAttemptAtMs: row.next_attempt_at_ms ?? undefined,
    deliveredAtMs: row.delivered_at_ms ?? undefined,
  };
}

export interface InstanceRow extends Record<string, unknown> {
  id: number;
  service: string | null;
  instance_id: string | null;
  first_seen_ms: number;
  last_seen_ms: number;
  advertised_ms: number | null;
  advertise_gen: number;
  build_key: string | null;
  ended_ms: number | null;
  ended_sessions: number | null;
}

export interface AdvertisedRow {
  instance_ref: number;
  server_name: string;
  server_version: string;
  extension_id: string;
  fingerprint: string;
  first_seen_ms: number;
  last_seen_ms: number;
  last_gen: number;
}

export interface CountRow {
  instance_ref: number;
  server_name: string;
  server_version: string;
  count: number;
  last_gen: number;
}

/** Stored empty (part of a key); read back as absent. */
const orNull = (value: string): string | null => (value === '' ? null : value);

/**
 * An instance's record from its row, what it advertised and its advertisement counts (rows in the order to list
 * them). Which advertisements are current is decided here: those of the instance's latest advertisement.
 */
export function instanceRecords(rows: readonly InstanceRow[], advertised: readonly AdvertisedRow[], counts: readonly CountRow[]): InstanceRecord[] {
  const byId = new Map<number, { row: InstanceRow; record: InstanceRecord }>();
  for (const row of rows) {
    // Built field by field in one order (not from entries): records stay fast objects, 500 of them in well under a millisecond.
    const record = {} as Record<string, unknown>;
    for (const column of INSTANCE_COLUMNS) record[column.key] = row[column.column] ?? null;
    // Rows written before builds were kept got their key from the migration; a row without one is keyed as it is read.
    record['buildKey'] = row.build_key ?? buildKey(record as unknown as InstanceRecord);
    record['firstSeenMs'] = row.first_seen_ms;
    record['lastSeenMs'] = row.last_seen_ms;
    record['advertisedMs'] = row.advertised_ms;
    record['endedMs'] = row.ended_ms;
    record['endedSessions'] = row.ended_sessions ?? null;
    record['advertised'] = [];
    record['counts'] = [];
    byId.set(row.id, { row, record: record as unknown as InstanceRecord });
  }
  for (const row of advertised) {
    const owner = byId.get(row.instance_ref);
    if (owner === undefined) continue;
    const record: AdvertisedRecord = {
      serverName: orNull(row.server_name),
      serverVersion: orNull(row.server_version),
      extensionId: row.extension_id,
      fingerprint: orNull(row.fingerprint),
      firstSeenMs: row.first_seen_ms,
      lastSeenMs: row.last_seen_ms,
      current: row.last_gen === owner.row.advertise_gen && owner.row.advertise_gen > 0,
    };
    owner.record.advertised.push(record);
  }
  for (const row of counts) {
    const owner = byId.get(row.instance_ref);
    if (owner === undefined) continue;
    const record: AdvertisedCountRecord = {
      serverName: orNull(row.server_name),
      serverVersion: orNull(row.server_version),
      count: row.count,
      current: row.last_gen === owner.row.advertise_gen && owner.row.advertise_gen > 0,
    };
    owner.record.counts.push(record);
  }
  return [...byId.values()].map((entry) => entry.record);
}

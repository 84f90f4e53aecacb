import type { ClientSlot, DeclarationSlot, ExtensionSlot, RequiredSlot, TrendResult } from '../store/query/trends.js';
import { type ClientGrouping, clientLabel } from './matrix.js';
import { negotiatedShare } from './share.js';

/**
 * Rollup sums per time step → the dashboard's series: dense arrays (one value per step, zeros included), shares
 * of each step's requests, the busiest clients with the rest summed. Pure: the store only sums.
 */

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const zeros = (length: number): number[] => new Array<number>(length).fill(0);

export function declarationSeries(result: TrendResult<DeclarationSlot>) {
  const series = { requests: zeros(result.slots), unknown: zeros(result.slots), none: zeros(result.slots), declared: zeros(result.slots) };
  for (const row of result.rows) {
    if (row.slot < 0 || row.slot >= result.slots) continue;
    series.requests[row.slot] = (series.requests[row.slot] ?? 0) + row.requests;
    const state = row.declaration;
    if (state === 'unknown' || state === 'none' || state === 'declared') series[state][row.slot] = (series[state][row.slot] ?? 0) + row.requests;
  }
  return series;
}

export function clientSeries(result: TrendResult<ClientSlot>, group: ClientGrouping, limit: number) {
  const clients = new Map<string, { client: string; name: string | null; version: string | null; total: number; requests: number[] }>();
  for (const row of result.rows) {
    if (row.slot < 0 || row.slot >= result.slots) continue;
    const version = group === 'client' ? null : row.version;
    const label = clientLabel(row.name, row.version, group);
    let entry = clients.get(label);
    if (entry === undefined) clients.set(label, (entry = { client: label, name: row.name, version, total: 0, requests: zeros(result.slots) }));
    entry.total += row.requests;
    entry.requests[row.slot] = (entry.requests[row.slot] ?? 0) + row.requests;
  }
  const ranked = [...clients.values()].sort((a, b) => b.total - a.total || byText(a.client, b.client));
  const other = { clients: 0, total: 0, requests: zeros(result.slots) };
  for (const rest of ranked.slice(limit)) {
    other.clients++;
    other.total += rest.total;
    rest.requests.forEach((value, index) => (other.requests[index] = (other.requests[index] ?? 0) + value));
  }
  return { group, clients: ranked.slice(0, limit), other };
}

export function extensionSeries(result: TrendResult<ExtensionSlot>) {
  const requests = zeros(result.slots);
  const serverUnknown = zeros(result.slots);
  const extensions = new Map<string, { id: string; clientDeclared: number[]; serverAdvertised: number[]; negotiated: number[] }>();
  for (const row of result.rows) {
    if (row.slot < 0 || row.slot >= result.slots) continue;
    if (row.id === null) {
      requests[row.slot] = (requests[row.slot] ?? 0) + row.requests;
      serverUnknown[row.slot] = (serverUnknown[row.slot] ?? 0) + (row.serverUnknown ?? 0);
      continue;
    }
    let entry = extensions.get(row.id);
    if (entry === undefined) {
      extensions.set(
        row.id,
        (entry = { id: row.id, clientDeclared: zeros(result.slots), serverAdvertised: zeros(result.slots), negotiated: zeros(result.slots) }),
      );
    }
    entry.clientDeclared[row.slot] = (entry.clientDeclared[row.slot] ?? 0) + row.clientDeclared;
    entry.serverAdvertised[row.slot] = (entry.serverAdvertised[row.slot] ?? 0) + row.serverAdvertised;
    entry.negotiated[row.slot] = (entry.negotiated[row.slot] ?? 0) + row.negotiated;
  }
  const list = [...extensions.values()]
    .sort((a, b) => byText(a.id, b.id))
    .map((entry) => ({ ...entry, negotiatedShare: entry.negotiated.map((n, index) => negotiatedShare(n, requests[index] ?? 0, serverUnknown[index] ?? 0)) }));
  return { requests, serverUnknown, extensions: list };
}

export function requiredSeries(result: TrendResult<RequiredSlot>) {
  const errors = zeros(result.slots);
  const extensions = new Map<
    string,
    { id: string; total: number; counts: number[]; clients: Map<string, { client: string; name: string | null; version: string | null; count: number }> }
  >();
  for (const row of result.rows) {
    if (row.slot < 0 || row.slot >= result.slots) continue;
    if (row.id === null) {
      errors[row.slot] = (errors[row.slot] ?? 0) + row.count;
      continue;
    }
    let entry = extensions.get(row.id);
    if (entry === undefined) extensions.set(row.id, (entry = { id: row.id, total: 0, counts: zeros(result.slots), clients: new Map() }));
    entry.total += row.count;
    entry.counts[row.slot] = (entry.counts[row.slot] ?? 0) + row.count;
    const label = clientLabel(row.name, row.version, 'client_version');
    const client = entry.clients.get(label) ?? { client: label, name: row.name, version: row.version, count: 0 };
    client.count += row.count;
    entry.clients.set(label, client);
  }
  const list = [...extensions.values()]
    .sort((a, b) => b.total - a.total || byText(a.id, b.id))
    .map((entry) => ({ ...entry, clients: [...entry.clients.values()].sort((a, b) => b.count - a.count || byText(a.client, b.client)) }));
  return { total: errors.reduce((sum, value) => sum + value, 0), errors, extensions: list };
}

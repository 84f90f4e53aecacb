import { expect } from 'vitest';

/** One row of the collector's matrix grouped by client and version. */
export interface MatrixRow {
  client: string;
  requests: number;
  declaration: { unknown: number; none: number; declared: number };
  extensions: { id: string; clientDeclared: number; serverAdvertised: number; negotiated: number }[];
}

/** The matrix since 2020, by `name@version` (optionally for one service). */
export async function matrixByClient(collectorUrl: string, service?: string): Promise<Map<string, MatrixRow>> {
  const query = new URLSearchParams({ group: 'client_version', from: '2020-01-01T00:00:00Z', ...(service !== undefined && { service }) });
  const response = await fetch(`${collectorUrl}/api/v1/matrix?${query.toString()}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { rows: MatrixRow[] };
  return new Map(body.rows.map((row) => [row.client, row]));
}

/** An extension's three counts in a row, or `undefined` when the row does not list it. */
export function extensionCounts(row: MatrixRow | undefined, id: string): { client: number; server: number; negotiated: number } | undefined {
  const found = row?.extensions.find((entry) => entry.id === id);
  return found === undefined ? undefined : { client: found.clientDeclared, server: found.serverAdvertised, negotiated: found.negotiated };
}

/** Waits until every named client row has exactly its expected number of requests. */
export async function pollRequests(collectorUrl: string, expected: Record<string, number>, service?: string): Promise<void> {
  await expect
    .poll(
      async () => {
        const rows = await matrixByClient(collectorUrl, service);
        return Object.fromEntries(Object.keys(expected).map((client) => [client, rows.get(client)?.requests ?? 0]));
      },
      { timeout: 30_000, interval: 250 },
    )
    .toEqual(expected);
}

/** Every request the collector holds under `service`, since 2020 (-1 while the collector cannot answer). */
export async function requestsOfService(collectorUrl: string, service: string): Promise<number> {
  const query = new URLSearchParams({ group: 'client_version', from: '2020-01-01T00:00:00Z', service });
  const response = await fetch(`${collectorUrl}/api/v1/matrix?${query.toString()}`);
  if (response.status !== 200) return -1;
  const body = (await response.json()) as { rows: { requests: number }[] };
  return body.rows.reduce((sum, row) => sum + row.requests, 0);
}

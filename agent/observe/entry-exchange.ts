import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * One exchange through an HTTP entry (`createMcpHandler().fetch`). The entry answers some requests itself,
 * before any server instance exists (unsupported revision, header mismatch, 413/415, missing required
 * capabilities); a request that does reach an instance marks the exchange, so the entry records only the rest.
 */
export interface EntryExchange {
  reached: boolean;
}

const exchanges = new AsyncLocalStorage<EntryExchange>();
// Until an HTTP entry runs, no request can be inside an exchange: skip the storage lookup on the hot path.
let anyExchange = false;

export function runExchange<T>(exchange: EntryExchange, fn: () => T): T {
  anyExchange = true;
  return exchanges.run(exchange, fn);
}

export function markReached(): void {
  if (!anyExchange) return;
  const exchange = exchanges.getStore();
  if (exchange !== undefined) exchange.reached = true;
}

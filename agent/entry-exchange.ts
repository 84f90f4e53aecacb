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

export function runExchange<T>(exchange: EntryExchange, fn: () => T): T {
  return exchanges.run(exchange, fn);
}

export function markReached(): void {
  const exchange = exchanges.getStore();
  if (exchange !== undefined) exchange.reached = true;
}

import { describe, expect, it } from 'vitest';
import { type EntryReach, EntryExchanges, type HttpExchange } from '../../../agent/observe/entry-exchange.js';
import type { RequestId } from '../../../agent/observe/request-facts.js';

function stdioEntry(): EntryReach & { ids: RequestId[] } {
  const ids: RequestId[] = [];
  return { ids, reached: (id) => void ids.push(id) };
}

describe('EntryExchanges', () => {
  it('stdio: the connections of a server the entry built report to that entry, and only those', () => {
    const exchanges = new EntryExchanges();
    const entry = stdioEntry();
    const built = {};
    exchanges.builtBy(built, entry);
    exchanges.entryFor(built).reached(1);
    exchanges.entryFor({}).reached(2); // a server no stdio entry built
    expect(entry.ids).toEqual([1]);
  });

  it('HTTP: a request received inside the exchange marks it reached, also after an await; outside it, nothing', async () => {
    const exchanges = new EntryExchanges();
    const inside: HttpExchange = { reached: false };
    const untouched: HttpExchange = { reached: false };
    const server = {};
    await exchanges.runHttp(inside, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      exchanges.entryFor(server).reached(0);
    });
    await exchanges.runHttp(untouched, async () => {});
    exchanges.entryFor(server).reached(1);
    expect(inside.reached).toBe(true);
    expect(untouched.reached).toBe(false);
  });

  it('a server a stdio entry built does not mark an HTTP exchange it happens to run in', async () => {
    const exchanges = new EntryExchanges();
    const entry = stdioEntry();
    const built = {};
    exchanges.builtBy(built, entry);
    const exchange: HttpExchange = { reached: false };
    await exchanges.runHttp(exchange, async () => exchanges.entryFor(built).reached(5));
    expect(exchange.reached).toBe(false);
    expect(entry.ids).toEqual([5]);
  });
});

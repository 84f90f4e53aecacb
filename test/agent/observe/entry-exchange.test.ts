import { describe, expect, it } from 'vitest';
import { EntryExchanges, type HttpExchange } from '../../../agent/observe/entry-exchange.js';

describe('EntryExchanges', () => {
  it('stdio: a forwarded request an instance received settles as reached, one it never received as the entry’s', () => {
    const exchanges = new EntryExchanges();
    const reached = { id: 1, method: 'tools/call' };
    const refused = { id: 2, method: 'initialize' };
    exchanges.forward(reached);
    exchanges.forward(refused);
    exchanges.reached(reached);
    expect(exchanges.settle(reached)).toBe(false);
    expect(exchanges.settle(refused)).toBe(true);
    // Settled once: the entry no longer holds either.
    expect(exchanges.settle(refused)).toBe(false);
  });

  it('stdio: pairs by the request object itself, not by id (ids repeat across wires)', () => {
    const exchanges = new EntryExchanges();
    const onWireA = { id: 0, method: 'ping' };
    const onWireB = { id: 0, method: 'ping' };
    exchanges.forward(onWireA);
    exchanges.forward(onWireB);
    exchanges.reached({ id: 0, method: 'ping' }); // an equal object that no entry forwarded
    exchanges.reached(onWireB);
    expect(exchanges.settle(onWireA)).toBe(true);
    expect(exchanges.settle(onWireB)).toBe(false);
  });

  it('HTTP: a request received inside the exchange marks it reached, also after an await', async () => {
    const exchanges = new EntryExchanges();
    const inside: HttpExchange = { reached: false };
    const untouched: HttpExchange = { reached: false };
    await exchanges.runHttp(inside, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      exchanges.reached({ id: 0, method: 'tools/list' });
    });
    await exchanges.runHttp(untouched, async () => {});
    exchanges.reached({ id: 1, method: 'tools/list' }); // outside any exchange
    expect(inside.reached).toBe(true);
    expect(untouched.reached).toBe(false);
  });

  it('a request forwarded by a stdio entry does not mark an HTTP exchange it happens to run in', async () => {
    const exchanges = new EntryExchanges();
    const exchange: HttpExchange = { reached: false };
    const forwarded = { id: 5, method: 'ping' };
    exchanges.forward(forwarded);
    await exchanges.runHttp(exchange, async () => exchanges.reached(forwarded));
    expect(exchange.reached).toBe(false);
    expect(exchanges.settle(forwarded)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { type EntryReach, EntryExchanges, type HttpExchange } from '../../../agent/observe/entry-exchange.js';
import type { RequestId } from '../../../agent/observe/request-facts.js';

/** What an HTTP entry does around its `fetch`: enters the exchange, runs it, leaves it. */
async function inExchange<T>(exchanges: EntryExchanges, exchange: HttpExchange, request: object, run: () => Promise<T>): Promise<T> {
  exchanges.enterHttp(exchange, request);
  try {
    return await run();
  } finally {
    exchanges.leaveHttp(exchange, request);
  }
}

const fresh = (): HttpExchange => ({ reached: false, copies: undefined });

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
    exchanges.entryFor(built).reached(1, undefined);
    exchanges.entryFor({}).reached(2, undefined); // a server no stdio entry built
    expect(entry.ids).toEqual([1]);
  });

  it("HTTP: a message passed with the exchange's request marks it reached, also after an await; with another request, or once the exchange ended, nothing", async () => {
    const exchanges = new EntryExchanges();
    const inside = fresh();
    const untouched = fresh();
    const server = {};
    const request = new Request('http://127.0.0.1/mcp', { method: 'POST' });
    const other = new Request('http://127.0.0.1/mcp', { method: 'POST' });
    await inExchange(exchanges, inside, request, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(exchanges.inHttpExchange(request)).toBe(true);
      exchanges.entryFor(server).reached(0, { request });
    });
    const untouchedRequest = new Request('http://127.0.0.1/mcp', { method: 'POST' });
    await inExchange(exchanges, untouched, untouchedRequest, async () => {
      exchanges.entryFor(server).reached(1, { request: other });
      exchanges.entryFor(server).reached(2, undefined);
    });
    exchanges.entryFor(server).reached(3, { request: untouchedRequest });
    expect(inside.reached).toBe(true);
    expect(untouched.reached).toBe(false);
    expect(exchanges.inHttpExchange(request)).toBe(false);
  });

  it("HTTP: a clone of the exchange's request made during it belongs to it; once it ended the request's clone is its own again", async () => {
    const exchanges = new EntryExchanges();
    const told: object[] = [];
    const exchange: HttpExchange = { reached: false, copies: { cloned: (copy) => void told.push(copy) } };
    const server = {};
    const request = new Request('http://127.0.0.1/mcp', { method: 'POST', body: '{}' });
    const ownBefore = Reflect.ownKeys(request);
    let copy: Request | undefined;
    await inExchange(exchanges, exchange, request, async () => {
      copy = request.clone();
      expect(copy).toBeInstanceOf(Request);
      expect(await copy.text()).toBe('{}');
      expect(exchanges.inHttpExchange(copy)).toBe(true);
      exchanges.entryFor(server).reached(0, { request: copy });
    });
    expect(exchange.reached).toBe(true);
    expect(told).toEqual([copy]);
    expect(Object.hasOwn(request, 'clone')).toBe(false);
    expect(Reflect.ownKeys(request)).toEqual(ownBefore);
    expect(request.clone).toBe(Request.prototype.clone);
  });

  it('HTTP: a request whose clone cannot be followed (frozen) counts as reached, so its answer is not recorded twice', async () => {
    const exchanges = new EntryExchanges();
    const exchange = fresh();
    const request = Object.freeze(new Request('http://127.0.0.1/mcp', { method: 'POST' }));
    await inExchange(exchanges, exchange, request, async () => undefined);
    expect(exchange.reached).toBe(true);
  });

  it('HTTP: an exchange entered again with a request already in one counts as reached and leaves the first one as it was', async () => {
    const exchanges = new EntryExchanges();
    const outer = fresh();
    const inner = fresh();
    const request = new Request('http://127.0.0.1/mcp', { method: 'POST', body: '{}' });
    await inExchange(exchanges, outer, request, async () => {
      await inExchange(exchanges, inner, request, async () => undefined);
      expect(inner.reached).toBe(true);
      expect(exchanges.inHttpExchange(request)).toBe(true);
      exchanges.entryFor({}).reached(0, { request: request.clone() });
    });
    expect(outer.reached).toBe(true);
    expect(exchanges.inHttpExchange(request)).toBe(false);
  });

  it('a server a stdio entry built does not mark an HTTP exchange it happens to run in', async () => {
    const exchanges = new EntryExchanges();
    const entry = stdioEntry();
    const built = {};
    exchanges.builtBy(built, entry);
    const exchange = fresh();
    const request = new Request('http://127.0.0.1/mcp', { method: 'POST' });
    await inExchange(exchanges, exchange, request, async () => exchanges.entryFor(built).reached(5, { request }));
    expect(exchange.reached).toBe(false);
    expect(entry.ids).toEqual([5]);
  });
});

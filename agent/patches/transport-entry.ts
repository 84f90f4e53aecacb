import type { HandlerFetch } from '../internal-types.js';
import type { EntryExchanges } from '../observe/entry-exchange.js';
import type { ServerAdvertisement } from '../observe/server-advertisement.js';
import { readRequest } from '../observe/request-facts.js';
import { asRecord } from '../observe/untrusted.js';
import type { RequestPipeline } from '../record/request-pipeline.js';
import { observingFetch } from './mcp-handler.js';

const OBSERVED = Symbol.for('extscope.transportEntry');

/**
 * A streamable HTTP transport answers some requests itself, before its server sees them: the v1 transport
 * (and v2's Node one) with sessions answers `server/discover` sent before `initialize` with HTTP 400 "Server
 * not initialized"; others are 406/415/413, a parse error, or a wrong session. Those answers reach a client
 * as the answer to its request, so they are recorded too, for the server the transport is connected to.
 *
 * The Fetch API `handleRequest(request, options)` of the web-standard transport (the transport itself, or
 * the one a Node transport wraps as `_webStandardTransport`) is run as an HTTP exchange, as the
 * `createMcpHandler` entry's `fetch` is; inside that entry the entry records such answers already.
 */
export function observeTransportRejections(transport: object, server: ServerAdvertisement, pipeline: RequestPipeline, exchanges: EntryExchanges): void {
  const inner = asRecord((transport as Record<string, unknown>)['_webStandardTransport']);
  const target = (inner ?? transport) as Record<string | symbol, unknown>;
  const handleRequest = target['handleRequest'];
  if (typeof handleRequest !== 'function' || target[OBSERVED] === true) return;
  const observed = observingFetch(
    handleRequest as HandlerFetch,
    pipeline,
    exchanges,
    (request, outcome, startTime) => {
      const facts = readRequest(request, undefined, pipeline.reading);
      pipeline.finish(facts, server, outcome, pipeline.start(facts, startTime)?.span, undefined);
    },
    'context',
  );
  target['handleRequest'] = function handleRequestObserved(this: unknown, request: unknown) {
    // Only the Fetch API form, outside an entry that observes its exchanges already.
    const fetchLike = typeof (request as Request | null)?.clone === 'function' && typeof (request as Request).method === 'string';
    if (!fetchLike || exchanges.inHttpExchange(request as Request))
      return (handleRequest as (...args: unknown[]) => unknown).apply(this, arguments as unknown as unknown[]);
    return observed.apply(this, arguments as unknown as [Request, { parsedBody?: unknown }?]);
  };
  target[OBSERVED] = true;
}

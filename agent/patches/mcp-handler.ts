import { OUTCOME } from '../../contract/index.js';
import type { HandlerFactory, HandlerFetch, McpHttpHandler } from '../internal-types.js';
import { BodyTap, EntryCopy, type RequestBody } from '../observe/request-body.js';
import type { EntryExchanges, HttpExchange } from '../observe/entry-exchange.js';
import { type JsonRpcRequest, type Outcome, type RequestId, isRequest, readOutcome } from '../observe/request-facts.js';
import { asRecord } from '../observe/untrusted.js';
import type { RequestPipeline } from '../record/request-pipeline.js';

/** Entry answers larger than this are not read back (they are never the small JSON-RPC errors we look for). */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The patched `createMcpHandler`: the handler it returns reports the requests its entry answers on its own,
 * before any server instance exists (unsupported revision, header mismatch, 413/415, …). Each `fetch` runs as
 * one exchange; a request that reaches an instance is recorded by that instance's connection instead. A POST's
 * body is read ({@link RequestBody}) and parsed only when no instance saw it.
 */
export function observingCreateMcpHandler(original: HandlerFactory, pipeline: RequestPipeline, exchanges: EntryExchanges): HandlerFactory {
  return function createMcpHandler(this: unknown, ...args: unknown[]) {
    const handler = original.apply(this, args);
    try {
      const fetch = (handler as McpHttpHandler | null)?.fetch;
      if (typeof fetch === 'function') (handler as McpHttpHandler).fetch = observingFetch(fetch as HandlerFetch, pipeline, exchanges);
    } catch (error) {
      pipeline.fail('http_entry', error);
    }
    return handler;
  };
}

/** Records a request that an HTTP exchange answered without any server instance receiving it. */
export type RecordUnreached = (request: JsonRpcRequest, outcome: Outcome, startTime: number) => void;

/**
 * Runs each call of `fetch` (a Fetch API handler: `createMcpHandler().fetch`, a transport's `handleRequest`)
 * as one HTTP exchange; a POST whose request reached no server instance is handed to `record` with its answer.
 */
export function observingFetch(
  fetch: HandlerFetch,
  pipeline: RequestPipeline,
  exchanges: EntryExchanges,
  record: RecordUnreached = (request, outcome, startTime) => pipeline.recordEntryAnswer(request, outcome, startTime),
  exchangeBy: 'request' | 'context' = 'request',
): HandlerFetch {
  return async function observedFetch(this: unknown, request, options) {
    const exchange: HttpExchange = { reached: false, copies: undefined };
    let body: RequestBody | undefined;
    try {
      if (options?.parsedBody === undefined && isPost(request.method) && !request.bodyUsed) {
        if (exchangeBy === 'request') {
          const entryCopy = new EntryCopy(request);
          exchange.copies = entryCopy;
          body = entryCopy;
        } else body = new BodyTap(request);
      }
    } catch (error) {
      pipeline.fail('http_entry', error);
    }
    const startTime = Date.now();
    let response: Response;
    if (exchangeBy === 'request') {
      try {
        exchanges.enterHttp(exchange, request);
      } catch (error) {
        exchange.reached = true;
        pipeline.fail('http_entry', error);
      }
      try {
        response = await fetch.call(this, request, options);
      } finally {
        try {
          exchanges.leaveHttp(exchange, request);
        } catch (error) {
          pipeline.fail('http_entry', error);
        }
      }
    } else response = await exchanges.runHttpInContext(exchange, () => fetch.call(this, request, options));
    if (exchange.reached) return response;
    try {
      // Cloned now, before the caller starts reading the body.
      const answer = isSmallJson(response) ? response.clone() : undefined;
      recordEntryAnswer(pipeline, record, body, options?.parsedBody, response, answer, startTime).catch((error) => pipeline.fail('http_entry', error));
    } catch (error) {
      pipeline.fail('http_entry', error);
    }
    return response;
  };
}

async function recordEntryAnswer(
  pipeline: RequestPipeline,
  record: RecordUnreached,
  body: RequestBody | undefined,
  parsedBody: unknown,
  response: Response,
  answer: Response | undefined,
  startTime: number,
): Promise<void> {
  let message = parsedBody;
  if (message === undefined && body !== undefined) {
    try {
      const text = await body.text();
      if (text === undefined) return; // over the bound, or read by someone else first
      message = JSON.parse(text);
    } catch {
      return; // not JSON: no JSON-RPC request to attribute the answer to
    }
  }
  if (!isRequest(message)) return;
  record(message, await readEntryOutcome(pipeline, response, answer, message.id), startTime);
}

/** A Fetch API `Request` has its method upper-cased already; a request-like object may not. */
function isPost(method: string): boolean {
  return method === 'POST' || method.toUpperCase() === 'POST';
}

function isSmallJson(response: Response): boolean {
  const type = response.headers.get('content-type') ?? '';
  const length = Number(response.headers.get('content-length') ?? '0');
  return type.includes('application/json') && length <= MAX_ANSWER_BYTES;
}

async function readEntryOutcome(pipeline: RequestPipeline, response: Response, answer: Response | undefined, id: RequestId): Promise<Outcome> {
  if (answer !== undefined) {
    try {
      const body = asRecord(await answer.json());
      // Entry errors often answer `id: null` (the request could not be read): an error body still classifies.
      if (body !== undefined && (body['id'] === id || 'error' in body)) return readOutcome(body, pipeline.reading.limits);
    } catch {
      // fall through to the HTTP status
    }
  }
  if (response.ok) return { outcome: OUTCOME.complete };
  return { outcome: OUTCOME.error, errorCode: response.status, errorMessage: `HTTP ${response.status}` };
}

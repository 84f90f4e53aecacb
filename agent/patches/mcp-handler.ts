import type { AgentCore } from '../record/request-pipeline.js';
import { type EntryExchange, runExchange } from '../observe/entry-exchange.js';
import { type Outcome, isRequest, readOutcome } from '../observe/request-facts.js';
import { OUTCOME } from '../../contract/index.js';

type Fetch = (this: unknown, request: Request, options?: { parsedBody?: unknown }) => Promise<Response>;
type HandlerFactory = (this: unknown, ...args: unknown[]) => unknown;

/** Entry answers larger than this are not read back (they are never the small JSON-RPC errors we look for). */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Wraps `createMcpHandler` so the handler it returns reports the requests its entry answers on its own.
 * The request body is teed (`Request.clone()`) only for POSTs and read only when no instance saw it.
 */
export function wrapMcpHandlerFactory(original: HandlerFactory, core: AgentCore): HandlerFactory {
  return function createMcpHandler(this: unknown, ...args: unknown[]) {
    const handler = original.apply(this, args);
    try {
      const fetch = (handler as { fetch?: unknown } | null)?.fetch;
      if (typeof fetch === 'function') (handler as { fetch: Fetch }).fetch = observeEntry(fetch as Fetch, core);
    } catch (error) {
      core.fail('http_entry', error);
    }
    return handler;
  };
}

function observeEntry(fetch: Fetch, core: AgentCore): Fetch {
  return async function observedFetch(this: unknown, request, options) {
    const exchange: EntryExchange = { reached: false };
    let copy: Request | undefined;
    try {
      if (options?.parsedBody === undefined && request.method.toUpperCase() === 'POST' && !request.bodyUsed) copy = request.clone();
    } catch (error) {
      core.fail('http_entry', error);
    }
    const startTime = Date.now();
    const response = await runExchange(exchange, () => fetch.call(this, request, options));
    if (exchange.reached) {
      copy?.body?.cancel().catch(() => {});
      return response;
    }
    try {
      // Cloned now, before the caller starts reading the body.
      const answer = isSmallJson(response) ? response.clone() : undefined;
      recordEntryAnswer(core, copy, options?.parsedBody, response, answer, startTime).catch((error) => core.fail('http_entry', error));
    } catch (error) {
      core.fail('http_entry', error);
    }
    return response;
  };
}

async function recordEntryAnswer(
  core: AgentCore,
  copy: Request | undefined,
  parsedBody: unknown,
  response: Response,
  answer: Response | undefined,
  startTime: number,
): Promise<void> {
  let message = parsedBody;
  if (message === undefined && copy !== undefined) {
    try {
      message = JSON.parse(await copy.text());
    } catch {
      return; // not JSON: no JSON-RPC request to attribute the answer to
    }
  }
  if (!isRequest(message)) return;
  core.recordUnreached(message, await readEntryOutcome(core, response, answer, message.id), startTime);
}

function isSmallJson(response: Response): boolean {
  const type = response.headers.get('content-type') ?? '';
  const length = Number(response.headers.get('content-length') ?? '0');
  return type.includes('application/json') && length <= MAX_ANSWER_BYTES;
}

async function readEntryOutcome(core: AgentCore, response: Response, answer: Response | undefined, id: string | number): Promise<Outcome> {
  if (answer !== undefined) {
    try {
      const body = (await answer.json()) as Record<string, unknown> | null;
      // Entry errors often answer `id: null` (the request could not be read): an error body still classifies.
      if (body !== null && typeof body === 'object' && (body['id'] === id || 'error' in body)) return readOutcome(body, core.limits);
    } catch {
      // fall through to the HTTP status
    }
  }
  if (response.ok) return { outcome: OUTCOME.complete };
  return { outcome: OUTCOME.error, errorCode: response.status, errorMessage: `HTTP ${response.status}` };
}

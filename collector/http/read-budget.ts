/**
 * What one read may make the collector compute, and how many heavy reads run at once. Output limits alone do not
 * bound a read: a matrix of `limit` rows × `extensionLimit` ids is dense (5,000 × 2,000 cells, ~200 MB of JSON on
 * data a sender can inflate with a few MB of valid ingest), and six such reads at once held gigabytes and the
 * event loop for tens of seconds. So a read is refused up front when it asks for more cells than
 * {@link ReadBudget.maxMatrixCells}, refused once scanned when the range holds more cell totals than
 * {@link ReadBudget.maxScannedCells}, and heavy reads (matrix, trends, time series, the filters' lists) wait in a short queue for one
 * of {@link ReadBudget.maxHeavyReads} slots, or are answered 503 with Retry-After. A large answer is written a
 * batch of items per turn of the event loop ({@link chunkedAnswer}): serialised in one go, the default matrix
 * (500 × 200, 10 MB of JSON) held the event loop 0.5-0.9 s on a shared 2-core machine. A route says that it is a
 * heavy read, and what it asks for, in its `config` ({@link HeavyRead}); the hooks here read that and nothing else.
 */
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler, preSerializationAsyncHookHandler } from 'fastify';
import { BusyError, PermanentError, type RetryableError } from '../model/errors.js';
import type { RollupReader } from '../store/store.js';

export interface ReadBudget {
  /** Rows × extension ids one matrix read may ask for (`limit` × `extensionLimit`). */
  maxMatrixCells: number;
  /** Cell totals (or step totals) one read may scan; past it, the read is refused: narrow the range or filter. */
  maxScannedCells: number;
  /** Heavy reads computed at once; more wait, a few of them, a little while. */
  maxHeavyReads: number;
}

/**
 * A route's `config.heavyRead`: its work grows with the data in the range (the matrix, trends, time series, and
 * the filters' client and id lists, which read every cell too). `true`, or what its request asks for.
 */
type HeavyRead =
  | true
  | {
      /** The cells a request asks for (the matrix: `limit` × `extensionLimit`), from its validated query. */
      askedCells(query: unknown): number;
    };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Present on a heavy read: it waits for a heavy-read slot, and a large answer is written in batches (http/read-budget.ts). */
    heavyRead?: HeavyRead;
  }
}

/** Heavy reads waiting per running one, and how long each may wait before it is told to come back. */
const QUEUE_PER_SLOT = 4;
const MAX_WAIT_MS = 10_000;
const RETRY_AFTER_SECONDS = 2;

/** A slot gate: `enter` resolves with a release once a slot is free, or throws the 503 the sender is told. */
export class HeavyReads {
  private running = 0;
  private readonly waiting: { admit(): void; timer: NodeJS.Timeout }[] = [];

  constructor(
    private readonly slots: number,
    private readonly maxWaiting = slots * QUEUE_PER_SLOT,
    private readonly maxWaitMs = MAX_WAIT_MS,
  ) {}

  get current(): number {
    return this.running;
  }

  async enter(): Promise<() => void> {
    if (this.running < this.slots) return this.take();
    if (this.waiting.length >= this.maxWaiting) throw busy();
    await new Promise<void>((resolve, reject) => {
      const entry = {
        admit: () => {
          clearTimeout(entry.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(busy());
        }, this.maxWaitMs),
      };
      this.waiting.push(entry);
    });
    return this.take();
  }

  private take(): () => void {
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.admit();
    };
  }
}

const busy = (): RetryableError => new BusyError('too many heavy reads in progress; retry later', 'reads_busy', RETRY_AFTER_SECONDS);

/**
 * `preHandler` for the read API: a heavy read ({@link HeavyRead}, in its route's `config`) that asks for too many
 * cells is refused before any work; otherwise it waits for a heavy-read slot, held until the answer is sent or
 * the client goes away (serialising a large answer is part of the work). Other routes pass.
 */
export function heavyReadGuard(budget: Pick<ReadBudget, 'maxMatrixCells'>, heavy: HeavyReads): preHandlerAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const policy = request.routeOptions.config.heavyRead;
    if (policy === undefined) return;
    if (policy !== true) {
      const cells = policy.askedCells(request.query);
      if (cells > budget.maxMatrixCells) {
        throw new PermanentError(
          `limit × extensionLimit is ${cells} cells; one read may ask for at most ${budget.maxMatrixCells} (EXTSCOPE_MAX_MATRIX_CELLS): lower either, or filter by service or instance`,
          'read_too_large',
        );
      }
    }
    const release = await heavy.enter();
    reply.raw.once('close', release);
  };
}

/**
 * The reader, with a bound on what one read may scan: a range holding more cell totals (or step totals) than
 * `maxScannedCells` is refused (400) before they are analysed and serialised, whatever the output limits say.
 * The reads that scan are bounded; the others are the store's own.
 */
export function scanBoundedReader(reader: RollupReader, maxScannedCells: number): RollupReader {
  const refuse = (scanned: number): PermanentError =>
    new PermanentError(
      `the range holds ${scanned} cell totals, more than one read may scan (${maxScannedCells}, EXTSCOPE_MAX_READ_CELLS): narrow it by time, service or instance`,
      'read_too_large',
    );
  // The analysis of what was read runs in one go: it starts in a turn of its own, after what is waiting (probes,
  // exports) has been served, rather than straight after the last chunk of the read.
  const within = async <T>(totals: T, scanned: number): Promise<T> => {
    if (scanned > maxScannedCells) throw refuse(scanned);
    await nextTurn();
    return totals;
  };
  return {
    async cellTotals(query) {
      const totals = await reader.cellTotals(query);
      return within(totals, totals.cells.length + (totals.serverUnknown?.length ?? 0));
    },
    async instanceCellTotals(query) {
      const totals = await reader.instanceCellTotals(query);
      return within(totals, totals.cells.length);
    },
    async stepTotals(query) {
      const totals = await reader.stepTotals(query);
      return within(totals, totals.length);
    },
    serverUnknownStepTotals: (query) => reader.serverUnknownStepTotals(query),
    behind: () => reader.behind(),
    instances: (query) => reader.instances(query),
    historyStart: (query) => reader.historyStart(query),
    examples: (query) => reader.examples(query),
    declarationTrend: (query) => reader.declarationTrend(query),
    clientTrend: (query) => reader.clientTrend(query),
    extensionTrend: (query) => reader.extensionTrend(query),
    requiredTrend: (query) => reader.requiredTrend(query),
  };
}

/** Values (list items and the items of their own lists) serialised per turn of the event loop: a few ms of work. */
const VALUES_PER_TURN = 4000;
/** Answers with fewer values in their largest list go through the ordinary serializer. */
const CHUNKED_FROM_VALUES = 20_000;

/** An item of a list, and the items of its own lists (a matrix row and its cells, a trend and its steps). */
function weightOf(item: unknown): number {
  if (typeof item !== 'object' || item === null) return 1;
  let weight = 1;
  for (const value of Object.values(item)) if (Array.isArray(value)) weight += value.length;
  return weight;
}

/**
 * `preSerialization` for heavy reads: a 200 answer whose largest top-level list holds many values is sent as a
 * stream of JSON written about {@link VALUES_PER_TURN} values per turn (the list last, the rest of the object
 * first), so that /healthz and ingest are served between batches. The routes' objects hold exactly their schema's
 * fields, so JSON.stringify writes what the schema's serializer would.
 */
export const chunkedAnswer: preSerializationAsyncHookHandler<unknown> = async (request, reply, payload) => {
  if (
    request.routeOptions.config.heavyRead === undefined ||
    reply.statusCode !== 200 ||
    typeof payload !== 'object' ||
    payload === null ||
    Array.isArray(payload)
  )
    return payload;
  const object = payload as Record<string, unknown>;
  let key: string | undefined;
  for (const [name, value] of Object.entries(object))
    if (Array.isArray(value) && (key === undefined || value.length > (object[key] as unknown[]).length)) key = name;
  const items = key === undefined ? [] : (object[key] as unknown[]);
  const perItem = weightOf(items[0]);
  if (key === undefined || items.length * perItem < CHUNKED_FROM_VALUES) {
    // In one piece, by JSON.stringify too: what the schema's serializer would write, in less time (a matrix by instance
    // of 500 rows, 2.4 MB, in about half).
    reply.serializer((object: unknown) => JSON.stringify(object));
    return payload;
  }
  const batch = Math.max(1, Math.floor(VALUES_PER_TURN / perItem));
  const { [key]: _list, ...rest } = object;
  // `{…rest,"key":[]}` without its closing `[]}`: the list is the object's last member.
  const head = JSON.stringify({ ...rest, [key]: [] }).slice(0, -3);
  async function* write(): AsyncGenerator<string> {
    yield `${head}[`;
    for (let start = 0; start < items.length; start += batch) {
      if (start > 0) await nextTurn();
      yield `${start > 0 ? ',' : ''}${items
        .slice(start, start + batch)
        .map((item) => JSON.stringify(item))
        .join(',')}`;
    }
    yield ']}';
  }
  // Sent as it is: the route's serializer would take the stream for the object its schema describes.
  reply.serializer((stream: unknown) => stream as string);
  void reply.header('content-type', 'application/json; charset=utf-8');
  return Readable.from(write());
};

import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { deserialize, serialize } from 'node:v8';

/**
 * A decoded request crossing from a decode worker to the main thread. Deserialising the graph of one 20,000-point
 * export (about 400,000 objects: every attribute is a KeyValue and an AnyValue) in one go held the main thread for
 * 0.2–0.4 s, and a structured-clone `postMessage` cannot be deserialised any other way. So the worker serialises
 * the request itself, in parts of at most {@link PART_WEIGHT} values, and the main thread deserialises one part
 * per turn of the event loop and puts the request back together, exactly as it was decoded.
 */

/** Values (objects and strings) in one part: about 10 ms of deserialising on a shared core. */
export const PART_WEIGHT = 20_000;

type Segment = string | number;
type Node = Record<string, unknown> | unknown[];

/** Appends `items` to the array at `path` (from the root); the first step of the first part creates the root. */
interface Step {
  path: Segment[];
  items: unknown[];
}

/** Objects and strings in `value`, counted up to `cap` (enough to tell whether it fits in a part). */
function weightUpTo(value: unknown, cap: number): number {
  let weight = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && weight < cap) {
    const next = pending.pop();
    if (typeof next === 'string') weight++;
    else if (typeof next === 'object' && next !== null) {
      weight++;
      if (ArrayBuffer.isView(next)) continue;
      for (const child of Array.isArray(next) ? next : Object.values(next)) if (typeof child === 'object' || typeof child === 'string') pending.push(child);
    }
  }
  return weight;
}

interface Deferred {
  path: Segment[];
  items: unknown[];
}

/**
 * Empties, in place, every array under `node` too heavy to travel with it, and queues its items to follow it
 * (so a part never carries more than one part's worth, whatever the shape: many points, many resources, or one
 * point with very many attributes). Returns what is left of the node's weight.
 */
function detachHeavyArrays(node: unknown, path: Segment[], queue: Deferred[]): number {
  if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node)) return weightUpTo(node, PART_WEIGHT);
  let weight = 1;
  const record = node as Record<Segment, unknown>;
  // By index for arrays: the counted-only points of other metrics travel as sparse arrays (decode-worker.ts).
  const keys: Segment[] = Array.isArray(node) ? Array.from({ length: node.length }, (_, index) => index) : Object.keys(node);
  for (const key of keys) {
    const child = record[key];
    if (Array.isArray(child) && weightUpTo(child, PART_WEIGHT) >= PART_WEIGHT) {
      record[key] = [];
      queue.push({ path: [...path, key], items: child });
      weight++;
    } else if (typeof child === 'object' && child !== null && !ArrayBuffer.isView(child)) {
      weight += detachHeavyArrays(child, [...path, key], queue);
    } else if (typeof child === 'string') weight++;
  }
  return weight;
}

/** The parts of a decoded request, each a v8-serialised list of steps, in the order they are to be applied. */
export function toParts(request: object): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let steps: Step[] = [];
  let weight = 0;
  const flush = (): void => {
    if (steps.length === 0) return;
    parts.push(serialize(steps));
    steps = [];
    weight = 0;
  };
  const queue: Deferred[] = [{ path: [], items: [request] }];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    let step: Step | undefined;
    for (let index = 0; index < next.items.length; index++) {
      const item = next.items[index];
      const itemPath = next.path.length === 0 ? [] : [...next.path, index];
      const itemWeight = detachHeavyArrays(item, itemPath, queue);
      if (step !== undefined && weight + itemWeight > PART_WEIGHT) {
        flush();
        step = undefined;
      }
      if (step === undefined) {
        step = { path: next.path, items: [] };
        steps.push(step);
      }
      step.items.push(item);
      weight += itemWeight;
    }
  }
  flush();
  return parts;
}

/** Puts a request back together from {@link toParts}, deserialising one part per turn of the event loop. */
export async function fromParts(parts: readonly Uint8Array[]): Promise<unknown> {
  let root: unknown;
  for (let index = 0; index < parts.length; index++) {
    if (index > 0) await yieldToEventLoop();
    for (const step of deserialize(parts[index] as Uint8Array) as Step[]) {
      if (step.path.length === 0) {
        root = step.items[0];
        continue;
      }
      let target = root as Node;
      for (const segment of step.path) target = (target as Record<Segment, unknown>)[segment] as Node;
      const list = target as unknown[];
      for (const item of step.items) list.push(item);
    }
  }
  return root;
}

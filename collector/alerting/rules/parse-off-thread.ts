/**
 * Parsing a large rules file on a worker thread: YAML parsing and the schema checks are synchronous, and a file
 * near the 1 MiB limit takes most of a second, which would stall every request of the collector (a SIGHUP must
 * never do that). A worker is started per large file (reloads are rare), bounded in heap and time.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ParseOutcome } from './load.js';

/** Texts up to this are parsed in place, in a few milliseconds: less than starting a worker. */
export const INLINE_PARSE_CHARS = 64 * 1024;
/** Longer than any file within the size limit takes; past it the file is refused and the worker stopped. */
const PARSE_TIMEOUT_MS = 20_000;
const WORKER_HEAP_MB = 256;

function workerUrl(): URL {
  const beside = new URL('./parse-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  // Loaded from the TypeScript sources (not the build): use the compiled worker of `npm run build`.
  return new URL('../../../dist/collector/alerting/rules/parse-worker.js', import.meta.url);
}

const failed = (message: string): ParseOutcome => ({ ok: false, errors: [{ line: 1, column: 1, path: '', message: `cannot be parsed: ${message}` }] });

/** {@link parseRules} of `text`, on a worker thread; a worker that fails, runs out of heap or time is an error of the file. */
export function parseRulesOffThread(text: string, source: string): Promise<ParseOutcome> {
  return new Promise((resolve) => {
    const worker = new Worker(workerUrl(), { workerData: { text, source }, execArgv: [], resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    let settled = false;
    const settle = (outcome: ParseOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle(failed(`took longer than ${PARSE_TIMEOUT_MS / 1000} s`)), PARSE_TIMEOUT_MS);
    worker.once('message', (outcome: ParseOutcome) => settle(outcome));
    worker.once('error', (error) => settle(failed(error.message.split('\n')[0]?.slice(0, 200) ?? 'the parser failed')));
    worker.once('exit', (code) => settle(failed(`the parser stopped (exit code ${code})`)));
  });
}

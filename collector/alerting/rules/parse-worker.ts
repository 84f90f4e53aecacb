/** Parses one rules file's text on a worker thread (see parse-off-thread.ts) and posts the outcome back. */
import { parentPort, workerData } from 'node:worker_threads';
import { parseRules } from './load.js';

const { text, source } = workerData as { text: string; source: string };
parentPort?.postMessage(parseRules(text, source));

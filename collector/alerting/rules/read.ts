/**
 * Reading a rules file's bytes without ever stalling the collector: off the event loop (async fs), regular files
 * only, and bounded. A rules file is a few kilobytes; a FIFO, a directory or a log written to the rules path by
 * mistake would otherwise block the process (`readFileSync` on a FIFO with no writer waits for ever) or make it
 * parse megabytes of YAML on the event loop.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** The most a rules file may hold: hundreds of rules fit in a few tens of kilobytes. */
const MAX_RULES_FILE_BYTES = 1024 * 1024;

export type RulesText = { ok: true; text: string } | { ok: false; message: string };

/** What a path that is not a regular file is, in words. */
function kindOf(stats: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a file';
}

/** The text of the rules file at `path`, or a one-line reason it cannot be used (without the path). */
export async function readRulesText(path: string): Promise<RulesText> {
  const limit = MAX_RULES_FILE_BYTES;
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer (holding a libuv thread for ever);
    // it changes nothing for a regular file.
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return { ok: false, message: `cannot be read: ${(error as Error).message}` };
  }
  try {
    // The opened file is checked, not the path: what is read is what was checked.
    const stats = await handle.stat();
    if (!stats.isFile()) return { ok: false, message: `is ${kindOf(stats)}, not a regular file` };
    if (stats.size > limit) return { ok: false, message: `is ${stats.size} bytes: a rules file may hold at most 1 MiB (${limit} bytes)` };
    // Read at most one byte past the limit: a file growing while it is read is still bounded.
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > limit) return { ok: false, message: `is more than ${limit} bytes: a rules file may hold at most 1 MiB (${limit} bytes)` };
    }
    return { ok: true, text: buffer.toString('utf8', 0, length) };
  } catch (error) {
    return { ok: false, message: `cannot be read: ${(error as Error).message}` };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * What a stdio server read on the wire (by `extscope wrap`, or the agent's wire fallback) advertised, remembered for
 * the next process of the same command. A 2026-07-28 client in `auto` negotiation probes `server/discover` in a
 * first, short-lived process and then starts the server again for its session, reusing that answer: the session's
 * process never says what it advertises, only who it is. The reader in the first process writes the answer down;
 * the one in the next reads it, and uses it only for a server that names itself with the same name and version,
 * within a few minutes of the probe, as the client does.
 *
 * One small JSON file per command line, working directory, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, in a directory of this user's only (0700) under the
 * system's temporary directory. Every failure reads as "nothing remembered": it never affects the server.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** An answer older than this is not used: the client's own reuse of a probe is a matter of seconds. */
const VALID_MS = 10 * 60_000;
/** Larger capabilities are not written down (and a larger file is not read). */
const MAX_BYTES = 64 * 1024;

interface Remembered {
  name: string | null;
  version: string | null;
  capabilities: Record<string, unknown>;
  savedAt: number;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export class ServerMemory {
  private readonly file: string | undefined;
  private readonly loaded: Remembered | undefined;

  /** `command`: the wrapped command line; `onError`: counts a failure (never thrown). */
  constructor(
    command: readonly string[],
    private readonly onError: (error: unknown) => void,
    private readonly now: () => number = Date.now,
    directory = join(tmpdir(), `extscope-wrap-${userInfo().uid}`),
  ) {
    try {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      const info = lstatSync(directory);
      // Another user's directory, or a link planted in its place: remember nothing.
      if (!info.isDirectory() || (typeof process.getuid === 'function' && info.uid !== process.getuid())) return;
      // What an operator sets apart per deployment is part of the key: one command line may serve different maps.
      const deployment = [process.env['OTEL_SERVICE_NAME'] ?? '', process.env['OTEL_RESOURCE_ATTRIBUTES'] ?? ''];
      const key = createHash('sha256').update(JSON.stringify([process.cwd(), ...deployment, ...command])).digest('hex').slice(0, 32);
      this.file = join(directory, `${key}.json`);
      this.loaded = this.read(this.file);
    } catch (error) {
      this.onError(error);
    }
  }

  /** The capabilities remembered for this server, when it names itself as the remembered one did. */
  capabilitiesOf(serverInfo: Record<string, unknown>): Record<string, unknown> | undefined {
    const remembered = this.loaded;
    if (remembered === undefined || this.now() - remembered.savedAt > VALID_MS) return undefined;
    return remembered.name === text(serverInfo['name']) && remembered.version === text(serverInfo['version']) ? remembered.capabilities : undefined;
  }

  /** Writes down a server's answer (atomically: a reader sees the old file or the new one). */
  remember(serverInfo: Record<string, unknown>, capabilities: Record<string, unknown>): void {
    if (this.file === undefined) return;
    try {
      const body = JSON.stringify({ name: text(serverInfo['name']), version: text(serverInfo['version']), capabilities, savedAt: this.now() } satisfies Remembered);
      if (Buffer.byteLength(body) > MAX_BYTES) return;
      const temporary = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temporary, body, { mode: 0o600 });
      renameSync(temporary, this.file);
    } catch (error) {
      this.onError(error);
    }
  }

  private read(file: string): Remembered | undefined {
    let body: string;
    try {
      const info = lstatSync(file);
      if (!info.isFile() || info.size > MAX_BYTES) return undefined;
      body = readFileSync(file, 'utf8');
    } catch {
      return undefined; // nothing remembered yet
    }
    const parsed = JSON.parse(body) as Partial<Remembered> | null;
    if (parsed === null || typeof parsed !== 'object' || typeof parsed.savedAt !== 'number' || typeof parsed.capabilities !== 'object' || parsed.capabilities === null || Array.isArray(parsed.capabilities)) return undefined;
    return { name: text(parsed.name), version: text(parsed.version), capabilities: parsed.capabilities, savedAt: parsed.savedAt };
  }
}

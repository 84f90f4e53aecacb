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
import { tmpdir } from 'node:os';
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
  /** Opened at first use: a process that never learns about a server touches no file. */
  private opened: { file: string | undefined; loaded: Remembered | undefined } | undefined;

  /** `command`: the server's command line; `onError`: counts a failure (never thrown). */
  constructor(
    private readonly command: readonly string[],
    private readonly onError: (error: unknown) => void,
    private readonly now: () => number = Date.now,
    // process.getuid, not os.userInfo(): the latter throws for a uid without a passwd entry (containers).
    private readonly directory = join(tmpdir(), `extscope-wrap-${process.getuid?.() ?? 'user'}`),
  ) {}

  private open(): { file: string | undefined; loaded: Remembered | undefined } {
    if (this.opened !== undefined) return this.opened;
    this.opened = { file: undefined, loaded: undefined };
    try {
      mkdirSync(this.directory, { recursive: true, mode: 0o700 });
      const info = lstatSync(this.directory);
      // Another user's directory, or a link planted in its place: remember nothing.
      if (!info.isDirectory() || (typeof process.getuid === 'function' && info.uid !== process.getuid())) return this.opened;
      // What an operator sets apart per deployment is part of the key: one command line may serve different maps.
      const deployment = [process.env['OTEL_SERVICE_NAME'] ?? '', process.env['OTEL_RESOURCE_ATTRIBUTES'] ?? ''];
      const key = createHash('sha256').update(JSON.stringify([process.cwd(), ...deployment, ...this.command])).digest('hex').slice(0, 32);
      const file = join(this.directory, `${key}.json`);
      this.opened = { file, loaded: undefined };
      this.opened.loaded = this.read(file);
    } catch (error) {
      this.onError(error);
    }
    return this.opened;
  }

  /** The capabilities remembered for this server, when it names itself as the remembered one did. */
  capabilitiesOf(serverInfo: Record<string, unknown>): Record<string, unknown> | undefined {
    const remembered = this.open().loaded;
    if (remembered === undefined || this.now() - remembered.savedAt > VALID_MS) return undefined;
    return remembered.name === text(serverInfo['name']) && remembered.version === text(serverInfo['version']) ? remembered.capabilities : undefined;
  }

  /** Writes down a server's answer (atomically: a reader sees the old file or the new one). */
  remember(serverInfo: Record<string, unknown>, capabilities: Record<string, unknown>): void {
    const { file } = this.open();
    if (file === undefined) return;
    try {
      const body = JSON.stringify({ name: text(serverInfo['name']), version: text(serverInfo['version']), capabilities, savedAt: this.now() } satisfies Remembered);
      if (Buffer.byteLength(body) > MAX_BYTES) return;
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, body, { mode: 0o600 });
      renameSync(temporary, file);
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

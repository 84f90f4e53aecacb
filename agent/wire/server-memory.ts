/**
 * What a stdio server read on the wire (by `extscope wrap`, or the agent's wire fallback) advertised, remembered for
 * the next process of the same command. A 2026-07-28 client in `auto` negotiation probes `server/discover` in a
 * first, short-lived process and then starts the server again for its session, reusing that answer: the session's
 * process never says what it advertises, only who it is. The reader in the first process writes the answer down;
 * the one in the next reads it, and uses it only for a server that names itself with the same name and version,
 * within a few minutes of the probe, as the client does.
 *
 * One small JSON file per launch configuration (see {@link launchKey}), in a directory of this user's only (0700,
 * checked before every use: see {@link memoryDirectory}). Every failure reads
 * as "nothing remembered" (counted): it never affects the server.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** An answer older than this is not used: the client's own reuse of a probe is a matter of seconds. */
const VALID_MS = 10 * 60_000;
/**
 * An answer saved later than now by more than this is not used either: one clock, so only a clock stepped back
 * between the probe and the session explains it, and a file that says it is from the future would otherwise
 * never expire.
 */
const CLOCK_SKEW_MS = 5_000;
/** Larger capabilities are not written down (and a larger file is not read). */
const MAX_BYTES = 64 * 1024;
/** Command-line arguments looked at as files whose change is a new configuration (see {@link launchKey}). */
const MAX_FILE_ARGUMENTS = 32;

/**
 * Variables that differ between two launches of the same configuration (the shell's, a terminal's, a login
 * session's, a service manager's per-start ones, Node's IPC channel) and never configure a server: they are left
 * out of the key, so that the probe's process and the session's still meet.
 */
const VOLATILE_ENV: ReadonlySet<string> = new Set([
  '_',
  'OLDPWD',
  'PWD',
  'SHLVL',
  'COLUMNS',
  'LINES',
  'TERM_SESSION_ID',
  'ITERM_SESSION_ID',
  'WINDOWID',
  'TMUX_PANE',
  'STY',
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'SSH_CLIENT',
  'SSH_CONNECTION',
  'SSH_TTY',
  'XDG_SESSION_ID',
  'INVOCATION_ID',
  'JOURNAL_STREAM',
  'SYSTEMD_EXEC_PID',
  'MANAGERPID',
  'LISTEN_PID',
  'LISTEN_FDS',
  'LISTEN_FDNAMES',
  'NOTIFY_SOCKET',
  'WATCHDOG_PID',
  'WATCHDOG_USEC',
  'NODE_CHANNEL_FD',
  'NODE_CHANNEL_SERIALIZATION_MODE',
  'NODE_UNIQUE_ID',
  'VSCODE_PID',
  'VSCODE_IPC_HOOK',
  'VSCODE_IPC_HOOK_CLI',
  'VSCODE_GIT_IPC_HANDLE',
]);

/** What decides a server's answer, as far as a wrapper can see it. */
export interface Launch {
  /** The server's command line. */
  command: readonly string[];
  /** The environment the server starts with. */
  env: NodeJS.ProcessEnv;
  /** Its working directory. */
  cwd: string;
}

/**
 * The key of a launch configuration: the command line, the working directory, the whole environment but
 * {@link VOLATILE_ENV} (sorted, so the order it was built in does not matter), and the size and modification time
 * of each of the first arguments that names a file (a script, a configuration file): the same command with another
 * variable, or with its configuration file edited, is another server until it answers for itself. A server that
 * reads a file its command line does not name, or a remote setting, can still change unseen: the name and version
 * it answers with, and {@link VALID_MS}, bound that.
 */
export function launchKey({ command, env, cwd }: Launch): string {
  const variables = Object.entries(env)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && !VOLATILE_ENV.has(entry[0]))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const files: [string, number, number][] = [];
  for (const argument of command.slice(0, MAX_FILE_ARGUMENTS)) {
    try {
      const info = statSync(resolve(cwd, argument), { throwIfNoEntry: false });
      if (info?.isFile() === true) files.push([argument, info.size, info.mtimeMs]);
    } catch {
      // Not a path (too long, a NUL byte): an argument like any other.
    }
  }
  return createHash('sha256').update(JSON.stringify({ cwd, command, variables, files })).digest('hex').slice(0, 32);
}

/** A directory of this user's (not one inherited through `su`), given as an absolute path; else undefined. */
function ownDirectory(path: string | undefined, uid: number | undefined): string | undefined {
  if (path === undefined || !isAbsolute(path)) return undefined;
  const info = statSync(path, { throwIfNoEntry: false });
  return info?.isDirectory() === true && (uid === undefined || info.uid === uid) ? path : undefined;
}

/**
 * This user's directory for the files, where no other user can create its name first: under `$XDG_RUNTIME_DIR`
 * (a login session's own) when it is this user's directory; else in the user's cache directory
 * (`$XDG_CACHE_HOME`, or `~/.cache`, when that or the home directory is this user's); only where neither exists
 * (a service account without a home), in the system's temporary directory, where another user could take the
 * name first and so switch the memory off (never fool it: see {@link ServerMemory}).
 */
export function memoryDirectory(env: NodeJS.ProcessEnv = process.env): string {
  // process.getuid, not os.userInfo(): the latter throws for a uid without a passwd entry (containers).
  const uid = process.getuid?.();
  const name = `extscope-wrap-${uid ?? 'user'}`;
  const runtime = ownDirectory(env['XDG_RUNTIME_DIR'], uid);
  if (runtime !== undefined) return join(runtime, name);
  const cache = ownDirectory(env['XDG_CACHE_HOME'], uid) ?? (ownDirectory(env['HOME'], uid) === undefined ? undefined : join(env['HOME']!, '.cache'));
  if (cache !== undefined) return join(cache, 'extscope', 'wrap-memory');
  return join(tmpdir(), name);
}

interface Remembered {
  name: string | null;
  version: string | null;
  capabilities: Record<string, unknown>;
  savedAt: number;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Why a directory (or file) found at our name is not ours to use; `undefined` when it is. */
function unsafe(info: { uid: number; mode: number }, kind: 'directory' | 'file', isKind: boolean): string | undefined {
  const uid = process.getuid?.();
  if (!isKind) return `not a ${kind} (a link or another kind of file)`;
  if (uid !== undefined && info.uid !== uid) return `owned by uid ${info.uid}, not ${uid}`;
  if ((info.mode & 0o077) !== 0) return `open to other users (mode ${(info.mode & 0o777).toString(8)})`;
  return undefined;
}

/** Opened without following a link, so that a file is read or written only where it is. */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

export class ServerMemory {
  /** Opened at first use: a process that never learns about a server touches no file. */
  private opened: { file: string | undefined; loaded: Remembered | undefined } | undefined;
  private readonly now: () => number;
  private directory: string | undefined;

  /** `onError`: counts a failure (never thrown). */
  constructor(
    private readonly launch: Launch,
    private readonly onError: (error: unknown) => void,
    options: { now?: () => number; directory?: string } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.directory = options.directory;
  }

  private open(): { file: string | undefined; loaded: Remembered | undefined } {
    if (this.opened !== undefined) return this.opened;
    this.opened = { file: undefined, loaded: undefined };
    try {
      const directory = (this.directory ??= memoryDirectory());
      if (!this.directorySafe(directory)) return this.opened;
      const file = join(directory, `${launchKey(this.launch)}.json`);
      this.opened = { file, loaded: undefined };
      this.opened.loaded = this.read(file);
    } catch (error) {
      this.onError(error);
    }
    return this.opened;
  }

  /**
   * Creates the directory (0700) when missing; true when what is there is this user's own directory, closed to
   * others. Anything else (another user's directory created first, a link, a directory others can write to) is
   * never used: counted, and nothing is remembered.
   */
  private directorySafe(directory: string): boolean {
    try {
      // The cache directory's parents (`~/.cache/extscope`) may not exist yet; the system's temporary one does.
      mkdirSync(dirname(directory), { recursive: true, mode: 0o700 });
      mkdirSync(directory, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const info = lstatSync(directory);
    const reason = unsafe(info, 'directory', info.isDirectory());
    if (reason === undefined) return true;
    this.onError(new Error(`extscope: ${directory} is ${reason}: the server's answers are not remembered`));
    return false;
  }

  /** The capabilities remembered for this server, when it names itself as the remembered one did. */
  capabilitiesOf(serverInfo: Record<string, unknown>): Record<string, unknown> | undefined {
    const remembered = this.open().loaded;
    if (remembered === undefined) return undefined;
    const age = this.now() - remembered.savedAt;
    if (age > VALID_MS || age < -CLOCK_SKEW_MS) return undefined;
    return remembered.name === text(serverInfo['name']) && remembered.version === text(serverInfo['version']) ? remembered.capabilities : undefined;
  }

  /** Writes down a server's answer (atomically: a reader sees the old file or the new one). */
  remember(serverInfo: Record<string, unknown>, capabilities: Record<string, unknown>): void {
    const { file } = this.open();
    if (file === undefined) return;
    try {
      const body = JSON.stringify({
        name: text(serverInfo['name']),
        version: text(serverInfo['version']),
        capabilities,
        savedAt: this.now(),
      } satisfies Remembered);
      if (Buffer.byteLength(body) > MAX_BYTES) return;
      // The directory may have changed hands since it was opened (it never should): checked again before writing.
      if (!this.directorySafe(dirname(file))) return;
      const temporary = `${file}.${process.pid}.tmp`;
      // A file left by an earlier process of this pid (or anything at that name) is replaced, never written through.
      try {
        unlinkSync(temporary);
      } catch {
        // None there.
      }
      const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW, 0o600);
      try {
        writeSync(fd, body);
      } finally {
        closeSync(fd);
      }
      // rename replaces a link at `file` itself; it never writes where one points.
      renameSync(temporary, file);
    } catch (error) {
      this.onError(error);
    }
  }

  private read(file: string): Remembered | undefined {
    let body: string;
    let fd: number;
    try {
      // O_NONBLOCK: a FIFO at that name must not hold the server's first answer.
      fd = openSync(file, constants.O_RDONLY | NO_FOLLOW | (constants.O_NONBLOCK ?? 0));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined; // nothing remembered yet
      throw error; // a link (ELOOP) or anything else: counted
    }
    try {
      const info = fstatSync(fd);
      const reason = unsafe(info, 'file', info.isFile());
      if (reason !== undefined) throw new Error(`extscope: ${file} is ${reason}: not read`);
      if (info.size > MAX_BYTES) return undefined;
      body = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
    const parsed = JSON.parse(body) as Partial<Remembered> | null;
    if (
      parsed === null ||
      typeof parsed !== 'object' ||
      typeof parsed.savedAt !== 'number' ||
      typeof parsed.capabilities !== 'object' ||
      parsed.capabilities === null ||
      Array.isArray(parsed.capabilities)
    )
      return undefined;
    return { name: text(parsed.name), version: text(parsed.version), capabilities: parsed.capabilities, savedAt: parsed.savedAt };
  }
}

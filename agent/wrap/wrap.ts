import { spawn } from 'node:child_process';
import { TRANSPORT } from '../../contract/index.js';
import { constants } from 'node:os';
import { LineFrames } from '../wire/frames.js';
import { WireConnection } from '../wire/connection.js';
import { StandaloneAgent } from '../wire/standalone-agent.js';
import { ServerMemory } from '../wire/server-memory.js';
import { watchChild } from './watchdog.js';

export const WRAP_USAGE = `Usage: extscope wrap -- <command> [args...]

Runs a stdio MCP server as a child process and records which extensions its clients negotiate, exactly as the
in-process agent does, without touching the server: stdin, stdout and stderr pass through byte for byte,
signals are forwarded, and extscope exits with the child's exit code (or dies of the same signal) after
exporting the last counts.

Put it in front of the server's command in a client's configuration:
  { "command": "npx", "args": ["extscope", "wrap", "--", "python", "server.py"] }

Environment: the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...) and
EXTSCOPE_SPANS, EXTSCOPE_CAPTURE_SETTINGS, as for the agent. The child gets the environment unchanged.
`;

/** Signals a terminal or a supervisor sends that the child, not extscope, should act on. */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'SIGWINCH'];

/** The exit code a shell gives for a command it cannot run (not found, not executable). */
const CANNOT_RUN = 127;

function commandOf(args: string[]): string[] | undefined {
  const separator = args.indexOf('--');
  const command = separator >= 0 ? args.slice(separator + 1) : args;
  if (separator > 0) return undefined; // options before `--`: none are defined
  return command.length === 0 ? undefined : command;
}

/** Everything the last write to `stream` held has been handed to the OS (or the stream is gone). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    // Zero bytes: only a barrier behind what the server (or an export's stderr line) already wrote; nothing is added.
    stream.write('', () => resolve());
  });
}

/**
 * `extscope wrap -- <command> [args...]`. Once the child ran, this process ends as the child did, after exporting:
 * with its exit code, or of the same signal (re-raised here) so a supervisor sees the same death. Resolves only
 * when no child ran (usage, a command that cannot be started), with the exit code to give.
 */
export async function runWrap(args: string[]): Promise<number> {
  if (args[0] === '--help' || args[0] === '-h') {
    // Only for `--help`, before any server is started: there is no protocol stream to share.
    process.stdout.write(WRAP_USAGE);
    return 0;
  }
  const command = commandOf(args);
  if (command === undefined) {
    process.stderr.write(`extscope wrap: give the server's command after "--"\n\n${WRAP_USAGE}`);
    return 2;
  }
  const agent = new StandaloneAgent(TRANSPORT.stdio);
  // A client that probed the server in an earlier process of this command reuses that answer here: so do we.
  const memory = new ServerMemory({ command, env: process.env, cwd: process.cwd() }, (error) => agent.pipeline.fail('wrap_memory', error));
  const connection = new WireConnection(agent.pipeline, agent, agent.advertisements, {
    rememberedCapabilities: (serverInfo) => memory.capabilitiesOf(serverInfo),
    remember: (serverInfo, capabilities) => memory.remember(serverInfo, capabilities),
  });
  const inbound = new LineFrames((message) => connection.inbound(message));
  const outbound = new LineFrames((message) => connection.outbound(message));
  const observe = (frames: LineFrames, stage: string) => (chunk: Buffer) => {
    try {
      frames.push(chunk);
    } catch (error) {
      agent.pipeline.fail(stage, error);
    }
  };

  const [file, ...rest] = command as [string, ...string[]];
  const child = spawn(file, rest, { stdio: ['pipe', 'pipe', 'inherit'] });
  const spawned = new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const failure = await spawned;
  if (failure !== undefined) {
    process.stderr.write(`extscope wrap: cannot run ${JSON.stringify(file)}: ${failure.message}\n`);
    return CANNOT_RUN;
  }

  // Started before anything else can fail: a wrapper killed from here on takes its server with it.
  const watchdog = watchChild(child.pid!, (error) => agent.pipeline.fail('wrap_watchdog', error));
  if (child.exitCode !== null || child.signalCode !== null) watchdog.childEnded();
  else child.once('exit', () => watchdog.childEnded());

  const forward = (signal: NodeJS.Signals): void => {
    try {
      child.kill(signal);
    } catch {
      // The child is gone already: its close ends this process.
    }
  };
  for (const signal of FORWARDED) process.on(signal, forward);

  // Client → child. A child that stopped reading (it exited) makes writes fail: nothing to do but wait for close.
  child.stdin.on('error', () => {});
  process.stdin.on('data', observe(inbound, 'wire_inbound'));
  process.stdin.pipe(child.stdin);
  // Child → client, unchanged. A client that went away: the child's output is still drained, so it never blocks.
  child.stdout.on('data', observe(outbound, 'wire_outbound'));
  child.stdout.pipe(process.stdout, { end: false });
  process.stdout.on('error', () => {
    child.stdout.unpipe(process.stdout);
    child.stdout.resume();
  });

  const { code, signal } = await closed;
  // Whatever the child had not answered when its stdout closed never will be.
  connection.closed();
  process.stdin.unpipe(child.stdin);
  process.stdin.destroy();
  await Promise.all([agent.shutdown(), flushed(process.stdout)]);
  await flushed(process.stderr);
  for (const forwarded of FORWARDED) process.off(forwarded, forward);
  if (signal !== null) process.kill(process.pid, signal);
  // The export had its bounded time (agent.shutdown): one still waiting on a collector that accepted and never
  // answers, under an exporter timeout longer than that, must not hold the exit. A signal whose default action does
  // not end a process (rare for a child's death) ends here too, with the code a shell reports for it.
  process.exit(signal !== null ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
}

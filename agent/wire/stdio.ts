import { isRequest } from '../observe/request-facts.js';
import { ServerMemory } from './server-memory.js';
import { WireConnection } from './connection.js';
import { LineFrames } from './frames.js';
import type { WireHost } from './fallback.js';

export interface StdioWireTap {
  stop(): void;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;
type StreamName = 'stdin' | 'stdout';

/**
 * Taps `process.stdin` and `process.stdout` for the wire fallback, as the application creates them (Node
 * creates both lazily, on first access: reading them here would open stdin in a process that never uses it).
 * Inbound bytes are seen in `stdin.push` (where the stream's source hands them over, before any listener),
 * outbound ones in `stdout.write`; both call the original with the same arguments.
 *
 * Whether to record is decided at the first bytes on stdin: when an SDK copy was patched by then, its
 * connections record, and both streams are unhooked (after noting whether that first chunk was MCP); a write
 * to stdout before any read unhooks them too when an SDK copy records.
 */
export function tapStdio(host: WireHost): StdioWireTap {
  // What this process was started with, before the application changes it (a `.env` loader): the key of its launch.
  const launch = { command: [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env: { ...process.env }, cwd: process.cwd() };
  let mode: 'undecided' | 'recording' | 'off' = 'undecided';
  let connection: WireConnection | undefined;
  let inbound: LineFrames | undefined;
  let outbound: LineFrames | undefined;
  let noted = false;
  const installed: { stream: Record<string, unknown>; name: string; wrapper: Method }[] = [];
  const descriptors = new Map<StreamName, PropertyDescriptor>();

  const noteMcp = (message: unknown): void => {
    if (noted) return;
    const first = Array.isArray(message) ? message[0] : message;
    if (!isRequest(first)) return;
    noted = true;
    host.mcpSeen('stdio');
  };

  const stop = (): void => {
    mode = 'off';
    for (const { stream, name, wrapper } of installed) if (stream[name] === wrapper) delete stream[name];
    installed.length = 0;
    for (const [name, descriptor] of descriptors) Object.defineProperty(process, name, descriptor);
    descriptors.clear();
  };

  const decide = (): void => {
    if (!host.sdkObserved()) {
      mode = 'recording';
      // A client that probed this server in an earlier process of the same command reuses that answer: so do we.
      const memory = new ServerMemory(launch, (error) => host.pipeline.fail('wire_memory', error));
      connection = new WireConnection(host.pipeline, host, host.advertisements, {
        active: () => !host.sdkObserved(),
        rememberedCapabilities: (serverInfo) => memory.capabilitiesOf(serverInfo),
        remember: (serverInfo, capabilities) => memory.remember(serverInfo, capabilities),
      });
      inbound = new LineFrames((message) => {
        noteMcp(message);
        connection!.inbound(message);
      });
      outbound = new LineFrames((message) => connection!.outbound(message));
      return;
    }
    // Only the first chunk is looked at, to tell whether this process serves MCP on stdio.
    stop();
  };

  const onRead = (chunk: unknown, encoding: unknown): void => {
    try {
      if (mode === 'undecided') {
        const recording = !host.sdkObserved();
        if (!recording && chunk !== null) new LineFrames(noteMcp).push(chunk, encoding);
        decide();
      }
      if (mode !== 'recording') return;
      if (chunk === null) connection!.closed();
      else inbound!.push(chunk, encoding);
    } catch (error) {
      host.pipeline.fail('wire_stdio', error);
    }
  };

  const onWrite = (chunk: unknown, encoding: unknown): void => {
    try {
      if (mode === 'recording') outbound!.push(chunk, encoding);
      // Written before anything was read (an HTTP server's log line) while an SDK copy records: nothing to
      // watch here. (A stdio server answers only after reading.)
      else if (mode === 'undecided' && host.sdkObserved()) stop();
    } catch (error) {
      host.pipeline.fail('wire_stdio', error);
    }
  };

  const wrap = (stream: Record<string, unknown>, name: 'push' | 'write', observe: (chunk: unknown, encoding: unknown) => void): void => {
    const original = stream[name];
    if (typeof original !== 'function') return;
    const wrapper: Method = function (this: unknown, chunk: unknown, encoding: unknown) {
      if (mode !== 'off') observe(chunk, encoding);
      return (original as Method).apply(this, arguments as unknown as unknown[]);
    };
    stream[name] = wrapper;
    installed.push({ stream, name, wrapper });
  };

  const hook = (name: StreamName, tap: (stream: Record<string, unknown>) => void): void => {
    const descriptor = Object.getOwnPropertyDescriptor(process, name);
    const get = descriptor?.get;
    if (descriptor === undefined || get === undefined || descriptor.configurable !== true) return;
    descriptors.set(name, descriptor);
    let tapped = false;
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: descriptor.enumerable ?? true,
      get() {
        const stream = get.call(this) as Record<string, unknown>;
        if (!tapped && mode !== 'off' && typeof stream === 'object' && stream !== null) {
          tapped = true;
          try {
            tap(stream);
          } catch (error) {
            host.pipeline.fail('wire_stdio', error);
          }
        }
        return stream;
      },
    });
  };

  hook('stdin', (stream) => wrap(stream, 'push', onRead));
  hook('stdout', (stream) => wrap(stream, 'write', onWrite));
  return { stop };
}

// Preloaded (`--import`) into every process `npm run demo` starts. The demo hands each of them one end of a pipe as
// fd 3 and holds the other: when the demo is gone, even killed with SIGKILL (which it cannot handle, so it cannot
// stop its children), that end closes, and the process stops itself as on SIGTERM (the servers flush their
// telemetry first). Started some other way, without fd 3, a process runs as if this were not there.
import { fstatSync } from 'node:fs';
import { Socket } from 'node:net';

function demoPipe() {
  try {
    return fstatSync(3).isSocket() ? new Socket({ fd: 3, readable: true, writable: false }) : undefined;
  } catch {
    return undefined; // no fd 3: not started by the demo
  }
}

const pipe = demoPipe();
if (pipe !== undefined) {
  pipe.on('error', () => {});
  pipe.once('close', () => process.kill(process.pid, 'SIGTERM'));
  pipe.resume(); // nothing is ever written: reading only notices the end
  pipe.unref(); // and it never keeps the process alive
}

import { spawn } from 'node:child_process';

/**
 * The shell's side: a line on stdin says the server ended (nothing to do); end of input without it means the
 * wrapper is gone, however it ended, and the server is killed.
 */
const SCRIPT = 'IFS= read -r said; [ "$said" = ended ] || kill -KILL "$1" 2>/dev/null';

export interface ChildWatchdog {
  /** The server has ended (its exit was seen): the watchdog stands down, so it never signals a pid reused since. */
  childEnded(): void;
}

/**
 * Kills the wrapped server when the wrapper dies without ending it (`kill -9`, the OOM killer): what Linux's
 * `PR_SET_PDEATHSIG` does for a child, which Node cannot ask for without native code. A POSIX shell, in a session
 * of its own (a terminal's Ctrl-C reaches the wrapper and the server as before, not it), reads a pipe whose write
 * end only this process holds (Node opens it close-on-exec, and the server was started before it existed): the
 * kernel closes it however this process ends, and the shell then sends the server SIGKILL, as the wrapper's own
 * death was. The server's stdio, process group, signals and exit status are untouched; a missing `/bin/sh` (or
 * Windows) leaves the wrapper as it was without one, counted.
 *
 * Only the direct child is signalled, as with `PR_SET_PDEATHSIG`; its own children see their stdin close.
 */
export function watchChild(pid: number, onError: (error: unknown) => void): ChildWatchdog {
  if (process.platform === 'win32') return { childEnded() {} };
  try {
    const shell = spawn('/bin/sh', ['-c', SCRIPT, 'extscope-wrap-watchdog', String(pid)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
      windowsHide: true,
    });
    shell.on('error', onError);
    shell.stdin.on('error', () => {}); // A watchdog that died first: nothing left to tell it.
    // The wrapper never waits for it: it ends by itself as soon as it is told, or when the wrapper is gone.
    shell.unref();
    return {
      childEnded() {
        try {
          shell.stdin.end('ended\n');
        } catch (error) {
          onError(error);
        }
      },
    };
  } catch (error) {
    onError(error);
    return { childEnded() {} };
  }
}

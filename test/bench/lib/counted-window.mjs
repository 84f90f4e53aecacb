// The worker's side of agent-instructions.mjs: warm up, then one window its coordinator switches callgrind's
// counting on around.
// Says `ready <pid>` on stderr once warm and waits for SIGUSR2; runs the measured requests and says `done <pid>`;
// waits for the next SIGUSR2 (the coordinator has dumped the counts) and returns.

/** `drive(n)` sends n requests and resolves when they are answered. */
export async function countedWindow(drive, warmUp, measured) {
  // One listener for the whole run. With a `once` per wait, SIGUSR2 is back at its default action (which ends the
  // process) between waits, and a run under valgrind once lost its worker to a signal it was waiting for.
  let wake = () => {};
  const onSignal = () => wake();
  process.on('SIGUSR2', onSignal);
  /** The next SIGUSR2; asked for before the line that lets the coordinator send it. */
  const signalled = () => new Promise((resolve) => (wake = resolve));
  // A signal listener does not keep the event loop alive; a timer that never fires does, at no cost per request.
  const keepAlive = setInterval(() => {}, 2 ** 30);
  await drive(warmUp);
  const started = signalled();
  process.stderr.write(`ready ${process.pid}\n`);
  await started;
  await drive(measured);
  const dumped = signalled();
  process.stderr.write(`done ${process.pid}\n`);
  await dumped;
  clearInterval(keepAlive);
  process.off('SIGUSR2', onSignal);
}

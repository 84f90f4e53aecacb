/**
 * Drives a client the way the benchmarks' workers do: `drive(total)` makes `total` more calls of `call()`,
 * `concurrency` of them in flight at once, and resolves when all are answered; `sent()` counts every call so far.
 */
export function lanes(concurrency, call) {
  let sent = 0;
  async function drive(total) {
    const target = sent + total;
    const running = Array.from({ length: concurrency }, async () => {
      while (sent < target) {
        sent++;
        await call();
      }
    });
    await Promise.all(running);
  }
  return { drive, sent: () => sent };
}

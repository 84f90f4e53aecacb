/** Polls `read` until `accept` holds or the time is up, and returns the last value read (the caller asserts on it). */
export async function eventually<T>(read: () => T | Promise<T>, accept: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

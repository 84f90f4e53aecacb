import type { Readable } from 'node:stream';

/**
 * Pauses a stream while anyone holds it: the upstream's backpressure and the decoder's both hold a request body,
 * and it flows again only when neither does.
 */
export class Valve {
  private holds = 0;

  constructor(private readonly stream: Readable) {}

  hold(): void {
    if (this.holds++ === 0) this.stream.pause();
  }

  release(): void {
    if (this.holds > 0 && --this.holds === 0) this.stream.resume();
  }
}

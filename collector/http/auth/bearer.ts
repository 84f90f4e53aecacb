import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Bearer-token checks. Both sides are hashed to a fixed length first, so the comparison takes the same time
 * whatever the presented token's length or content.
 */
export class BearerToken {
  private readonly digest: Buffer;

  constructor(token: string) {
    this.digest = createHash('sha256').update(token).digest();
  }

  /** Whether an `Authorization` header carries this token. */
  matches(authorization: string | undefined): boolean {
    const presented = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')?.[1] ?? '';
    const digest = createHash('sha256').update(presented).digest();
    // Hash and compare even when nothing usable was presented: no early exit to time.
    return timingSafeEqual(digest, this.digest) && presented.length > 0;
  }
}

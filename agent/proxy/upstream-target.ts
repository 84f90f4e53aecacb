/**
 * Where `extscope proxy` forwards to, from `--upstream URL`: the origin, a base path every request target is put
 * under, and credentials sent as Basic authentication. Also maps the upstream's own URLs in `Location` and
 * `Content-Location` back to the proxy, as nginx's `proxy_redirect default` does, so a client that follows a
 * redirect stays on the proxy (and is counted).
 */
export class UpstreamTarget {
  readonly origin: string;
  /** The path every request target is put under, without a trailing `/` (`''`: none). */
  readonly basePath: string;
  /** `Basic …` from the URL's user and password, sent when the client sends no `Authorization` of its own. */
  readonly authorization: string | undefined;

  constructor(readonly url: URL) {
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.authorization =
      url.username === '' && url.password === ''
        ? undefined
        : `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  }

  /** The upstream as shown in logs: no credentials. */
  get display(): string {
    return `${this.origin}${this.basePath}`;
  }

  /**
   * The path (with query) to request upstream for a request target, or `undefined` for a target that names no
   * path (`*`, an authority). An absolute-form target (`http://169.254.169.254/x`, RFC 9112 §3.2.2) is
   * normalised to its path: the proxy forwards to its upstream only, never to a host a client names.
   */
  path(target: string | undefined): string | undefined {
    if (target === undefined) return undefined;
    let path = target;
    if (!target.startsWith('/')) {
      if (!/^https?:\/\//i.test(target)) return undefined;
      try {
        const absolute = new URL(target);
        path = `${absolute.pathname}${absolute.search}`;
      } catch {
        return undefined;
      }
    }
    return `${this.basePath}${path}`;
  }

  /**
   * A `Location` or `Content-Location` value with the upstream's URL (origin and base path) replaced by
   * `proxyOrigin`; any other value unchanged. A path-absolute value under the base path loses the base path.
   */
  rewrite(value: string, proxyOrigin: string): string {
    const base = `${this.origin}${this.basePath}`;
    if (startsWithSegment(value.toLowerCase(), base.toLowerCase())) return `${proxyOrigin}${value.slice(base.length)}`;
    if (this.basePath !== '' && startsWithSegment(value, this.basePath)) return value.slice(this.basePath.length) || '/';
    return value;
  }
}

/** Whether `value` starts with `prefix` ending at a path boundary (`/base` matches `/base/x`, not `/basement`). */
function startsWithSegment(value: string, prefix: string): boolean {
  if (!value.startsWith(prefix)) return false;
  const next = value.charAt(prefix.length);
  return next === '' || next === '/' || next === '?' || next === '#';
}

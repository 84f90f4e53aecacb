import type { Head } from './http-head.js';
import type { UpstreamTarget } from './upstream-target.js';

/** A `Host` header that can name the proxy in a rewritten `Location` (anything else: the listening address). */
const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The request's head as sent upstream: its target under the upstream's base path, `Host` naming the upstream, and the upstream's credentials if it has none. */
export function requestHeadRewritten(head: Head, path: string, upstream: UpstreamTarget): string {
  const { text } = head;
  const targetEnd = head.targetStart + head.target.length;
  let out = `${text.slice(0, head.targetStart)}${path}`;
  if (head.hostStart >= 0) out += `${text.slice(targetEnd, head.hostStart)}Host: ${upstream.url.host}${text.slice(head.hostEnd, text.length - 2)}`;
  else out += `${text.slice(targetEnd, text.length - 2)}Host: ${upstream.url.host}\r\n`;
  if (upstream.authorization !== undefined && !head.authorization) out += `Authorization: ${upstream.authorization}\r\n`;
  return `${out}\r\n`;
}

/**
 * The answer's head with each `Location` and `Content-Location` naming the upstream naming the proxy instead
 * (nginx's `proxy_redirect default`): the proxy as the request's `Host` named it, when that is a plain host (else
 * its listening address). `undefined` when nothing changed: the head passes as its bytes.
 */
export function answerHeadRewritten(head: Head, request: Head, upstream: UpstreamTarget, ownUrl: string): string | undefined {
  const host = request.host;
  const origin = host !== undefined && HOST_HEADER.test(host) ? `http://${host}` : ownUrl;
  const { text } = head;
  let out = '';
  let changed = false;
  let pos = 0;
  for (let next = text.indexOf('\r\n', pos); next > pos; next = text.indexOf('\r\n', pos)) {
    const colon = text.indexOf(':', pos);
    const name = colon > pos && colon < next ? text.slice(pos, colon).toLowerCase() : '';
    if (name === 'location' || name === 'content-location') {
      const value = text.slice(colon + 1, next).trim();
      const moved = upstream.rewrite(value, origin);
      changed ||= moved !== value;
      out += `${text.slice(pos, colon + 1)} ${moved}\r\n`;
    } else out += text.slice(pos, next + 2);
    pos = next + 2;
  }
  return changed ? `${out}\r\n` : undefined;
}

/** How a message's body is delimited (RFC 9112 §6.3). */
export const enum BodyKind {
  None,
  Length,
  Chunked,
  /** Until the connection closes (a response only). */
  UntilClose,
}

/** The largest head the proxy reads (Node's own default `maxHeaderSize`): a longer one is refused with 431. */
export const MAX_HEAD_BYTES = 16 * 1024;

/** Why a head cannot be relayed: the status the client is answered with. */
export class HeadError extends Error {
  constructor(
    readonly status: 400 | 431 | 502,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// A CR or LF that is not part of a CRLF, or another control character: refused, as Node's parser refuses them, so
// that the upstream and the proxy never disagree on where a header (and so a message) ends.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const BAD_BYTES = /\r(?!\n)|(?<!\r)\n|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const DIGITS = /^\d{1,15}$/;

/**
 * The fields of a head the proxy reads: its framing, whether the connection ends after it, and the few headers the
 * recorder and the rewrites need. Read from the head's bytes as latin1 text (each byte one character, so a value
 * written back is the same bytes); `hostStart`/`hostEnd` and `authorization` locate what a request's rewrite changes.
 */
export class Head {
  /** The request's method, or the response's status code as text. */
  first = '';
  /** The request target (requests only), and where it is in the text. */
  target = '';
  targetStart = 0;
  /** The minor version of HTTP/1.x. */
  minor = 1;
  status = 0;
  body = BodyKind.None;
  length = 0;
  /** The connection ends after this message (`Connection: close`, or HTTP/1.0 without keep-alive). */
  close = false;
  upgrade = false;
  /** The `Host` line (from its first character to its CRLF), `-1` when there is none. */
  hostStart = -1;
  hostEnd = -1;
  host: string | undefined = undefined;
  authorization = false;
  contentEncoding: string | undefined = undefined;
  contentType: string | undefined = undefined;
  sessionId: string | undefined = undefined;
  protocolVersion: string | undefined = undefined;
  /** A `Location` or `Content-Location` header is present (a response's rewrite looks at it). */
  location = false;

  constructor(readonly text: string) {}
}

/** A request head (`text` ends with its empty line), or a {@link HeadError} saying why it is refused. */
export function requestHead(text: string): Head {
  const head = new Head(text);
  const lineEnd = text.indexOf('\r\n');
  const space = text.indexOf(' ');
  const second = text.indexOf(' ', space + 1);
  if (space <= 0 || second <= space + 1 || second > lineEnd) throw new HeadError(400, 'malformed request line');
  head.first = text.slice(0, space);
  head.target = text.slice(space + 1, second);
  head.targetStart = space + 1;
  const version = text.slice(second + 1, lineEnd);
  if (version === 'HTTP/1.1') head.minor = 1;
  else if (version === 'HTTP/1.0') head.minor = 0;
  else throw new HeadError(400, 'unsupported HTTP version');
  if (!TOKEN.test(head.first)) throw new HeadError(400, 'malformed method');
  fields(head, lineEnd + 2, true);
  return head;
}

/** A response head, or a {@link HeadError} (status 502: the upstream's answer cannot be relayed). */
export function responseHead(text: string): Head {
  const head = new Head(text);
  const lineEnd = text.indexOf('\r\n');
  if (!text.startsWith('HTTP/1.') || text.charCodeAt(8) !== 32) throw new HeadError(502, 'malformed status line');
  head.minor = text.charCodeAt(7) - 48;
  if (head.minor !== 0 && head.minor !== 1) throw new HeadError(502, 'unsupported HTTP version');
  head.first = text.slice(9, 12);
  head.status = Number(head.first);
  if (!/^[1-9]\d\d$/.test(head.first) || (lineEnd > 12 && text.charCodeAt(12) !== 32)) throw new HeadError(502, 'malformed status line');
  fields(head, lineEnd + 2, false);
  return head;
}

/** Reads the header fields from `start`; sets the framing a request or a response has by them. */
function fields(head: Head, start: number, request: boolean): void {
  const { text } = head;
  const fail = request ? 400 : 502;
  if (BAD_BYTES.test(text)) throw new HeadError(fail, 'a control character in the head');
  let lengths = 0;
  let encodings: string | undefined;
  let connection: string | undefined;
  let upgrade = false;
  let pos = start;
  for (;;) {
    const next = text.indexOf('\r\n', pos);
    if (next === pos) break;
    const colon = text.indexOf(':', pos);
    if (colon <= pos || colon > next) throw new HeadError(fail, 'malformed header line');
    const name = text.slice(pos, colon);
    // No whitespace before the colon, no folded line (RFC 9112 §5.1, §5.2): either could be read two ways.
    if (!TOKEN.test(name)) throw new HeadError(fail, 'malformed header name');
    // Only the names read here are lower-cased: most headers are passed by without a string made of their value.
    switch (name.length) {
      case 4:
        if (request && name.toLowerCase() === 'host') {
          if (head.hostStart >= 0) throw new HeadError(400, 'more than one Host header');
          head.hostStart = pos;
          head.hostEnd = next;
          head.host = value(text, colon, next);
        }
        break;
      case 7:
        if (name.toLowerCase() === 'upgrade') upgrade = true;
        break;
      case 8:
        if (!request && name.toLowerCase() === 'location') head.location = true;
        break;
      case 10:
        if (name.toLowerCase() === 'connection') connection = connection === undefined ? value(text, colon, next) : `${connection},${value(text, colon, next)}`;
        break;
      case 12:
        if (!request && name.toLowerCase() === 'content-type') head.contentType = value(text, colon, next);
        break;
      case 13:
        if (request && name.toLowerCase() === 'authorization') head.authorization = true;
        break;
      case 14: {
        const lower = name.toLowerCase();
        if (lower === 'content-length') {
          const length = value(text, colon, next);
          if (!DIGITS.test(length) || (lengths++ > 0 && Number(length) !== head.length)) throw new HeadError(fail, 'invalid Content-Length');
          head.length = Number(length);
        } else if (lower === 'mcp-session-id') head.sessionId = head.sessionId === undefined ? value(text, colon, next) : undefined;
        break;
      }
      case 16: {
        const lower = name.toLowerCase();
        if (lower === 'content-encoding') head.contentEncoding = value(text, colon, next);
        else if (!request && lower === 'content-location') head.location = true;
        break;
      }
      case 17:
        if (name.toLowerCase() === 'transfer-encoding')
          encodings = encodings === undefined ? value(text, colon, next) : `${encodings},${value(text, colon, next)}`;
        break;
      case 20:
        if (request && name.toLowerCase() === 'mcp-protocol-version') head.protocolVersion = value(text, colon, next);
        break;
    }
    pos = next + 2;
  }
  const tokens = connection?.toLowerCase();
  head.close = tokens === undefined ? head.minor === 0 : head.minor === 0 ? !tokens.includes('keep-alive') : /(?:^|,)\s*close\s*(?:,|$)/.test(tokens);
  head.upgrade = upgrade && tokens !== undefined && /(?:^|,)\s*upgrade\s*(?:,|$)/.test(tokens);
  if (encodings !== undefined) {
    // Transfer-Encoding with Content-Length is how requests are smuggled past a proxy (RFC 9112 §6.1): refused.
    if (lengths > 0 && request) throw new HeadError(400, 'both Transfer-Encoding and Content-Length');
    const chunked = /(?:^|,)\s*chunked\s*$/i.test(encodings);
    if (request && !chunked) throw new HeadError(400, 'a request body not chunked last');
    head.body = chunked ? BodyKind.Chunked : BodyKind.UntilClose;
    if (head.minor === 0 && request) throw new HeadError(400, 'Transfer-Encoding in HTTP/1.0');
  } else if (lengths > 0) head.body = head.length > 0 ? BodyKind.Length : BodyKind.None;
  else head.body = request ? BodyKind.None : BodyKind.UntilClose;
}

function value(text: string, colon: number, end: number): string {
  return text.slice(colon + 1, end).trim();
}

/** Whether a response with `status` to a request with `method` has a body (RFC 9112 §6.3: HEAD, 1xx, 204, 304 never). */
export function responseHasBody(method: string, status: number): boolean {
  return method !== 'HEAD' && status >= 200 && status !== 204 && status !== 304;
}

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
/** `TOKEN_CHAR[c]` is 1 for each character of a token (RFC 9110 §5.6.2), read a character at a time. */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of "!#$%&'*+.^_`|~-0123456789") TOKEN_CHAR[c.charCodeAt(0)] = 1;
for (let c = 0x41; c <= 0x5a; c++) TOKEN_CHAR[c] = TOKEN_CHAR[c | 0x20] = 1;
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
  if (controlIn(text, space + 1, second)) throw new HeadError(400, 'a control character in the head');
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
  if (controlIn(text, 12, lineEnd)) throw new HeadError(502, 'a control character in the head');
  fields(head, lineEnd + 2, false);
  return head;
}

/**
 * Reads the header fields from `start`; sets the framing a request or a response has by them. One pass over the
 * characters: each name must be a token ending at its colon (no whitespace before it, no folded line: RFC 9112
 * §5.1, §5.2, either could be read two ways), and a value holds no control character but a tab, and no CR or LF
 * that is not its line's CRLF (refused as Node's parser refuses them, so that the upstream and the proxy never
 * disagree on where a header, and so a message, ends). Only the names read here are compared, by their length
 * first: most headers are passed by without a string made of their name or their value.
 */
function fields(head: Head, start: number, request: boolean): void {
  const { text } = head;
  const fail = request ? 400 : 502;
  let lengths = 0;
  let encodings: string | undefined;
  let connection: string | undefined;
  let upgrade = false;
  let pos = start;
  // `text` ends with its empty line (its only one), so every scan below meets a CR before it runs out.
  const last = text.length - 2;
  while (pos < last) {
    let colon = pos;
    let c = text.charCodeAt(colon);
    while (c < 128 && TOKEN_CHAR[c] === 1) c = text.charCodeAt(++colon);
    if (c !== 58 || colon === pos) throw new HeadError(fail, colon === pos ? 'malformed header line' : 'malformed header name');
    let next = colon + 1;
    for (c = text.charCodeAt(next); c !== 13; c = text.charCodeAt(++next))
      if (c < 32 ? c !== 9 : c === 127) throw new HeadError(fail, 'a control character in the head');
    if (text.charCodeAt(next + 1) !== 10) throw new HeadError(fail, 'a control character in the head');
    switch (colon - pos) {
      case 4:
        if (request && named(text, pos, 'host')) {
          if (head.hostStart >= 0) throw new HeadError(400, 'more than one Host header');
          head.hostStart = pos;
          head.hostEnd = next;
          head.host = value(text, colon, next);
        }
        break;
      case 7:
        if (named(text, pos, 'upgrade')) upgrade = true;
        break;
      case 8:
        if (!request && named(text, pos, 'location')) head.location = true;
        break;
      case 10:
        if (named(text, pos, 'connection')) connection = connection === undefined ? value(text, colon, next) : `${connection},${value(text, colon, next)}`;
        break;
      case 12:
        if (!request && named(text, pos, 'content-type')) head.contentType = value(text, colon, next);
        break;
      case 13:
        if (request && named(text, pos, 'authorization')) head.authorization = true;
        break;
      case 14:
        if (named(text, pos, 'content-length')) {
          const length = value(text, colon, next);
          if (!DIGITS.test(length) || (lengths++ > 0 && Number(length) !== head.length)) throw new HeadError(fail, 'invalid Content-Length');
          head.length = Number(length);
        } else if (named(text, pos, 'mcp-session-id')) head.sessionId = head.sessionId === undefined ? value(text, colon, next) : undefined;
        break;
      case 16:
        if (named(text, pos, 'content-encoding')) head.contentEncoding = value(text, colon, next);
        else if (!request && named(text, pos, 'content-location')) head.location = true;
        break;
      case 17:
        if (named(text, pos, 'transfer-encoding')) encodings = encodings === undefined ? value(text, colon, next) : `${encodings},${value(text, colon, next)}`;
        break;
      case 20:
        if (request && named(text, pos, 'mcp-protocol-version')) head.protocolVersion = value(text, colon, next);
        break;
    }
    pos = next + 2;
  }
  const tokens = connection?.toLowerCase();
  head.close =
    tokens === undefined
      ? head.minor === 0
      : head.minor === 0
        ? !tokens.includes('keep-alive')
        : tokens !== 'keep-alive' && /(?:^|,)\s*close\s*(?:,|$)/.test(tokens);
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

/** Whether the name at `pos` (as long as `lower`) is `lower`, in any case: `lower` is letters and `-` only. */
function named(text: string, pos: number, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) if ((text.charCodeAt(pos + i) | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

/** Whether `text` holds a control character other than a tab between `from` and `to`. */
function controlIn(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 ? c !== 9 : c === 127) return true;
  }
  return false;
}

function value(text: string, colon: number, end: number): string {
  return text.slice(colon + 1, end).trim();
}

/** Whether a response with `status` to a request with `method` has a body (RFC 9112 §6.3: HEAD, 1xx, 204, 304 never). */
export function responseHasBody(method: string, status: number): boolean {
  return method !== 'HEAD' && status >= 200 && status !== 204 && status !== 304;
}

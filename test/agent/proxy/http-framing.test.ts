import { describe, expect, it } from 'vitest';
import { BodyFraming, FramingError } from '../../../agent/proxy/body-framing.js';
import { BodyKind, HeadError, requestHead, responseHead, responseHasBody } from '../../../agent/proxy/http-head.js';

/** Every payload `framing` hands on when `bytes` come split at `cuts`, and where the body ended in the last piece. */
function readSplit(framing: BodyFraming, bytes: Buffer, cuts: number[]): { payload: string; endedAt: number; done: boolean } {
  let payload = '';
  let endedAt = -1;
  const edges = [0, ...cuts, bytes.length];
  for (let i = 0; i + 1 < edges.length && endedAt < 0; i++) {
    const piece = bytes.subarray(edges[i], edges[i + 1]);
    const end = framing.read(piece, 0, (part) => (payload += part.toString('latin1')));
    if (framing.done) endedAt = edges[i]! + end;
  }
  return { payload, endedAt, done: framing.done };
}

describe('the proxy reads request and response heads for their framing', () => {
  it('reads the framing, the connection, and the headers the recorder and the rewrites need', () => {
    const text =
      'POST /mcp?x=1 HTTP/1.1\r\nhost: proxy:8080\r\nContent-Length: 12\r\nMcp-Session-Id: s-1\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Encoding: gzip\r\nAuthorization: Bearer t\r\n\r\n';
    const head = requestHead(text);
    expect({ method: head.first, target: head.target, body: head.body, length: head.length, close: head.close }).toEqual({
      method: 'POST',
      target: '/mcp?x=1',
      body: BodyKind.Length,
      length: 12,
      close: false,
    });
    expect({ host: head.host, session: head.sessionId, version: head.protocolVersion, encoding: head.contentEncoding, auth: head.authorization }).toEqual({
      host: 'proxy:8080',
      session: 's-1',
      version: '2025-06-18',
      encoding: 'gzip',
      auth: true,
    });
    expect(text.slice(head.hostStart, head.hostEnd)).toBe('host: proxy:8080');
    expect(requestHead('GET / HTTP/1.0\r\n\r\n').close).toBe(true);
    expect(requestHead('GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n').close).toBe(false);
    expect(requestHead('GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n').close).toBe(true);
    expect(requestHead('GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n').upgrade).toBe(true);
    expect(requestHead('GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n').upgrade).toBe(false);
    expect(requestHead('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n').body).toBe(BodyKind.Chunked);
  });

  it('refuses what the upstream could read otherwise: Transfer-Encoding with Content-Length, two lengths, a folded line, space before a colon, a bare LF or CR, a control character', () => {
    const refused = [
      'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n',
      'POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n',
      'POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n',
      'POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n',
      'POST / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n',
      'POST / HTTP/1.1\r\nContent-Length : 3\r\n\r\n',
      'POST / HTTP/1.1\r\nX-A: 1\nContent-Length: 3\r\n\r\n',
      'POST / HTTP/1.1\r\nX-A: 1\rContent-Length: 3\r\n\r\n',
      'POST / HTTP/1.1\r\nX-A: a\x00b\r\n\r\n',
      'POST / HTTP/1.1\r\nX-A: a\x7fb\r\n\r\n',
      'POST / HTTP/1.1\r\nX-\u00e9: 1\r\n\r\n',
      'POST /a\x01b HTTP/1.1\r\n\r\n',
      'POST /a\nb HTTP/1.1\r\n\r\n',
      'POST / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
      'POST / HTTP/2.0\r\n\r\n',
      'POST /\r\n\r\n',
    ];
    for (const text of refused) expect(() => requestHead(text), JSON.stringify(text)).toThrow(HeadError);
    // The same length twice is one length.
    expect(requestHead('POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n').length).toBe(3);
    // A tab and bytes above ASCII pass in a value, as Node's parser lets them.
    expect(requestHead('POST / HTTP/1.1\r\nX-A: a\tb \u00e9\r\nContent-Length: 3\r\n\r\n').length).toBe(3);
  });

  it('frames a response by its status, its length, chunked, or the close, and reads what the rewrites need', () => {
    const json = responseHead('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nmcp-session-id: s-2\r\n\r\n');
    expect({ status: json.status, body: json.body, length: json.length, session: json.sessionId, type: json.contentType }).toEqual({
      status: 200,
      body: BodyKind.Length,
      length: 5,
      session: 's-2',
      type: 'application/json',
    });
    expect(responseHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n').body).toBe(BodyKind.Chunked);
    expect(responseHead('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n').body).toBe(BodyKind.UntilClose);
    expect(responseHead('HTTP/1.0 200 OK\r\n\r\n').close).toBe(true);
    expect(responseHead('HTTP/1.1 307 Temporary Redirect\r\nLocation: /x\r\n\r\n').location).toBe(true);
    expect(responseHead('HTTP/1.1 200\r\n\r\n').status).toBe(200);
    expect(() => responseHead('HTTP/1.1 2000 OK\r\n\r\n')).toThrow(HeadError);
    expect(() => responseHead('HTTP/1.1 200 O\x00K\r\n\r\n')).toThrow(HeadError);
    expect(() => responseHead('HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 5\r\n\r\n')).toThrow(HeadError);
    expect([responseHasBody('HEAD', 200), responseHasBody('POST', 204), responseHasBody('GET', 304), responseHasBody('POST', 100)]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(responseHasBody('POST', 200)).toBe(true);
  });
});

describe('the proxy finds where a body ends as its bytes come', () => {
  it('counts a length down across pieces and stops where the next message starts', () => {
    const framing = new BodyFraming();
    framing.start(BodyKind.Length, 5);
    expect(readSplit(framing, Buffer.from('helloGET / HTTP/1.1'), [2])).toEqual({ payload: 'hello', endedAt: 5, done: true });
  });

  it('reads a chunked body with extensions and trailers cut at every byte the same way as whole', () => {
    const payload = '{"jsonrpc":"2.0","id":1,"result":{}}';
    const body = `5;name=value\r\n${payload.slice(0, 5)}\r\n${(payload.length - 5).toString(16).toUpperCase()}\r\n${payload.slice(5)}\r\n0\r\nX-Trailer: 1\r\n\r\n`;
    const bytes = Buffer.from(`${body}NEXT`);
    for (let cut = 1; cut < body.length; cut++) {
      for (const second of [cut + 1, cut + 3]) {
        const framing = new BodyFraming();
        framing.start(BodyKind.Chunked, 0);
        const cuts = second < bytes.length ? [cut, second] : [cut];
        expect(readSplit(framing, bytes, cuts), `cut at ${cut}, ${second}`).toEqual({ payload, endedAt: body.length, done: true });
      }
    }
  });

  it('refuses a chunked body whose framing could be read two ways', () => {
    for (const body of ['\r\n', 'x\r\n', '3\r\nabcd\r\n', '3\nabc\r\n', '0\r\nX: 1\n\r\n', '3\r\nabc\rx']) {
      const framing = new BodyFraming();
      framing.start(BodyKind.Chunked, 0);
      expect(() => framing.read(Buffer.from(body), 0, undefined), JSON.stringify(body)).toThrow(FramingError);
    }
  });

  it('ends a body delimited by the close only at the close, and a counted one cut short is not whole', () => {
    const untilClose = new BodyFraming();
    untilClose.start(BodyKind.UntilClose, 0);
    expect(untilClose.read(Buffer.from('data: 1\n\n'), 0, undefined)).toBe(9);
    expect(untilClose.done).toBe(false);
    expect(untilClose.closed()).toBe(true);
    const counted = new BodyFraming();
    counted.start(BodyKind.Length, 10);
    counted.read(Buffer.from('abc'), 0, undefined);
    expect(counted.closed()).toBe(false);
  });
});

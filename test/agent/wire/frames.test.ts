import { describe, expect, it } from 'vitest';
import { AnswerFrames, BodyFrames, LineFrames, MAX_FRAME_CHARS } from '../../../agent/wire/frames.js';

describe('LineFrames: newline-delimited JSON off a byte stream', () => {
  it('reads messages split anywhere, multi-byte characters included, and skips lines that are not JSON', () => {
    const seen: unknown[] = [];
    const frames = new LineFrames((message) => seen.push(message));
    const bytes = Buffer.from('log line\n{"id":1,"text":"h\u00e9llo \u{1F600}"}\r\n[{"id":2}]\n{"broken":\n{"id":3}');
    // One byte at a time: every boundary, inside a UTF-8 sequence too.
    for (let i = 0; i < bytes.length; i++) frames.push(bytes.subarray(i, i + 1));
    expect(seen).toEqual([{ id: 1, text: 'h\u00e9llo \u{1F600}' }, [{ id: 2 }]]);
    frames.push('\n', 'utf8');
    expect(seen).toEqual([{ id: 1, text: 'h\u00e9llo \u{1F600}' }, [{ id: 2 }], { id: 3 }]);
  });

  it('skips a line longer than the limit without buffering it, and reads the next one', () => {
    const seen: unknown[] = [];
    const frames = new LineFrames((message) => seen.push(message));
    const chunk = `{"pad":"${'x'.repeat(1024 * 1024)}`;
    for (let i = 0; i * chunk.length <= MAX_FRAME_CHARS; i++) frames.push(chunk);
    frames.push('"}\n{"id":9}\n');
    expect(seen).toEqual([{ id: 9 }]);
  });
});

describe('AnswerFrames: an HTTP answer body, JSON or an event stream', () => {
  it('a JSON body is read at its end, one message or a batch', () => {
    const seen: unknown[] = [];
    const frames = new AnswerFrames((message) => seen.push(message));
    frames.push('[{"id":1,"result":{}},');
    frames.push(Buffer.from('{"id":2,"result":{}}]'));
    expect(seen).toEqual([]);
    frames.end();
    expect(seen).toEqual([
      [
        { id: 1, result: {} },
        { id: 2, result: {} },
      ],
    ]);
  });

  it("an event stream gives each event's data as it completes; comments, ids and events without data are skipped", () => {
    const seen: unknown[] = [];
    const frames = new AnswerFrames((message) => seen.push(message));
    frames.push(': keep-alive\n\nid: 7\nevent: message\ndata: {"id":1,');
    frames.push('"result":{}}\n\nevent: ping\n\n');
    expect(seen).toEqual([{ id: 1, result: {} }]);
    frames.push('data:{"id":2,\r\ndata:"error":{"code":-1}}');
    frames.end();
    expect(seen).toEqual([
      { id: 1, result: {} },
      { id: 2, error: { code: -1 } },
    ]);
  });
});

describe('BodyFrames: a request body', () => {
  it('is JSON when complete, and undefined when it is not JSON', () => {
    const body = new BodyFrames();
    body.push('{"jsonrpc":"2.0",');
    body.push(Buffer.from('"id":1,"method":"ping"}'));
    expect(body.end()).toEqual({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const bad = new BodyFrames();
    bad.push('{ not json');
    expect(bad.end()).toBeUndefined();
  });
});

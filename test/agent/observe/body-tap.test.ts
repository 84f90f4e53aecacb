import { describe, expect, it } from 'vitest';
import { BodyTap, MAX_TAPPED_BYTES } from '../../../agent/observe/body-tap.js';

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { note: 'é ✓ 𝄞' } });

function post(body: string | ReadableStream<Uint8Array>, init: RequestInit = {}): Request {
  return new Request('http://127.0.0.1/mcp', { method: 'POST', body, ...init, ...(body instanceof ReadableStream ? { duplex: 'half' } : {}) } as RequestInit);
}

/** A body sent in chunks, with a multi-byte character split across two of them. */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

/** What createMcpHandler does, the tap followed as the agent follows it: clone (the copy it forwards), then read the request's own stream to the end. */
async function readAsTheEntryDoes(request: Request, tap: BodyTap): Promise<{ read: string; forwarded: string }> {
  tap.follow();
  const forward = request.clone();
  tap.follow();
  const reader = request.body!.getReader();
  const decoder = new TextDecoder();
  let read = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    read += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return { read: read + decoder.decode(), forwarded: await forward.text() };
}

describe('BodyTap', () => {
  it('keeps what the entry reads after cloning, and the entry and the clone read the same bytes as without it', async () => {
    for (const body of [BODY, chunked(BODY, 5)]) {
      const request = post(body);
      const tap = new BodyTap(request);
      const { read, forwarded } = await readAsTheEntryDoes(request, tap);
      expect(read).toBe(BODY);
      expect(forwarded).toBe(BODY);
      expect(await tap.text()).toBe(BODY);
    }
  });

  it('sees a body read without a clone (the streamable HTTP transports), and one read with text() (undici reads it through the stream’s getReader)', async () => {
    const request = post(chunked(BODY, 3));
    const tap = new BodyTap(request);
    tap.follow();
    const reader = request.body!.getReader();
    const decoder = new TextDecoder();
    let read = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) read += decoder.decode(chunk.value, { stream: true });
    expect(read + decoder.decode()).toBe(BODY);
    expect(await tap.text()).toBe(BODY);

    const cloned = post(chunked(BODY, 3));
    const clonedTap = new BodyTap(cloned);
    clonedTap.follow();
    cloned.clone();
    clonedTap.follow();
    expect(await cloned.text()).toBe(BODY);
    expect(await clonedTap.text()).toBe(BODY);
  });

  it('reads a body the entry never touched (a 415 answered from the headers)', async () => {
    const request = post(BODY, { headers: { 'content-type': 'text/plain' } });
    const tap = new BodyTap(request);
    tap.follow();
    expect(await tap.text()).toBe(BODY);
  });

  it('reads what the entry left after cloning: none of it (a 413 on Content-Length) or part of it (a 413 while reading)', async () => {
    const untouched = post(chunked(BODY, 4));
    const untouchedTap = new BodyTap(untouched);
    untouchedTap.follow();
    untouched.clone();
    untouchedTap.follow();
    expect(await untouchedTap.text()).toBe(BODY);

    const partly = post(chunked(BODY, 4));
    const partlyTap = new BodyTap(partly);
    partlyTap.follow();
    partly.clone();
    partlyTap.follow();
    const reader = partly.body!.getReader();
    await reader.read();
    await reader.read();
    reader.releaseLock();
    expect(await partlyTap.text()).toBe(BODY);
  });

  it('gives nothing for a body over the bound, and the entry still reads all of it', async () => {
    const size = MAX_TAPPED_BYTES + 1024;
    const request = post(chunked('x'.repeat(size), 1024 * 1024));
    const tap = new BodyTap(request);
    const { read } = await readAsTheEntryDoes(request, tap);
    expect(read.length).toBe(size);
    expect(await tap.text()).toBeUndefined();
  });

  it('gives nothing, and changes nothing, for a reader it cannot follow (BYOB) or a body read before it followed the request', async () => {
    const byob = post(BODY);
    const byobTap = new BodyTap(byob);
    byobTap.follow();
    byob.clone();
    byobTap.follow();
    const reader = byob.body!.getReader({ mode: 'byob' });
    const { value } = await reader.read(new Uint8Array(4096));
    expect(new TextDecoder().decode(value)).toBe(BODY);
    expect(await byobTap.text()).toBeUndefined();

    const unseen = post(BODY);
    const unseenTap = new BodyTap(unseen);
    expect(await unseen.text()).toBe(BODY);
    expect(await unseenTap.text()).toBeUndefined();
  });
});

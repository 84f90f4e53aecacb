import { describe, expect, it } from 'vitest';
import { BodyTap, EntryCopy, MAX_KEPT_BYTES } from '../../../agent/observe/request-body.js';

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

/** Reads a request's stream to the end as the SDKs do (`readRequestBody`), releasing the lock after `limit` chunks if given. */
async function readAsTheSdkDoes(request: Request, limit = Infinity): Promise<string> {
  const reader = request.body!.getReader();
  const decoder = new TextDecoder();
  let read = '';
  try {
    for (let chunks = 0; chunks < limit; chunks++) {
      const { done, value } = await reader.read();
      if (done) break;
      read += decoder.decode(value, { stream: true });
    }
  } finally {
    reader.releaseLock();
  }
  return read + decoder.decode();
}

describe('EntryCopy: the copy createMcpHandler makes itself', () => {
  it('reads the entry’s own clone when the entry read the original (a refusal after reading the body)', async () => {
    const request = post(chunked(BODY, 5));
    const copy = new EntryCopy(request);
    copy.cloned(request.clone());
    expect(await readAsTheSdkDoes(request)).toBe(BODY);
    expect(await copy.text()).toBe(BODY);
  });

  it('reads the whole body from the clone when the entry stopped part way (a 413 found while reading)', async () => {
    const request = post(chunked(BODY, 4));
    const copy = new EntryCopy(request);
    copy.cloned(request.clone());
    await readAsTheSdkDoes(request, 2);
    expect(await copy.text()).toBe(BODY);
  });

  it('reads the request itself when the entry never cloned it (a 415 answered from the headers)', async () => {
    const request = post(BODY, { headers: { 'content-type': 'text/plain' } });
    expect(await new EntryCopy(request).text()).toBe(BODY);
  });

  it('gives nothing for a clone someone read, or a body over the bound', async () => {
    const request = post(BODY);
    const copy = new EntryCopy(request);
    const clone = request.clone();
    copy.cloned(clone);
    await clone.text();
    expect(await copy.text()).toBeUndefined();

    const large = post(chunked('x'.repeat(MAX_KEPT_BYTES + 1024), 1024 * 1024));
    expect(await new EntryCopy(large).text()).toBeUndefined();
  });
});

describe('BodyTap: a transport reading the request it is given', () => {
  it('keeps what the transport reads, and the transport reads the same bytes as without it', async () => {
    for (const body of [BODY, chunked(BODY, 3)]) {
      const request = post(body);
      const tap = new BodyTap(request);
      expect(await readAsTheSdkDoes(request)).toBe(BODY);
      expect(await tap.text()).toBe(BODY);
    }
  });

  it('sees a body read with text() (undici reads through the stream’s getReader)', async () => {
    const request = post(chunked(BODY, 3));
    const tap = new BodyTap(request);
    expect(await request.text()).toBe(BODY);
    expect(await tap.text()).toBe(BODY);
  });

  it('reads what the transport left: none of it (a 415) or part of it (a 413 while reading)', async () => {
    const untouched = post(chunked(BODY, 4));
    const untouchedTap = new BodyTap(untouched);
    expect(await untouchedTap.text()).toBe(BODY);

    const partly = post(chunked(BODY, 4));
    const partlyTap = new BodyTap(partly);
    await readAsTheSdkDoes(partly, 2);
    expect(await partlyTap.text()).toBe(BODY);
  });

  it('gives nothing for a body over the bound, and the transport still reads all of it', async () => {
    const size = MAX_KEPT_BYTES + 1024;
    const request = post(chunked('x'.repeat(size), 1024 * 1024));
    const tap = new BodyTap(request);
    expect((await readAsTheSdkDoes(request)).length).toBe(size);
    expect(await tap.text()).toBeUndefined();
  });

  it('gives nothing, and changes nothing, for a reader it cannot follow (BYOB)', async () => {
    const request = post(BODY);
    const tap = new BodyTap(request);
    const reader = request.body!.getReader({ mode: 'byob' });
    const { value } = await reader.read(new Uint8Array(4096));
    expect(new TextDecoder().decode(value)).toBe(BODY);
    expect(await tap.text()).toBeUndefined();
  });
});

// What the HTTP server sends of an answer (src/web/bodies.ts): the text the answer was made with
// while it is whole, else the bytes a hook read, else the body read now.
import { describe, expect, it } from 'vitest';
import { bodyToSend, readBody } from '../src/web/bodies.ts';
import { Response } from '../src/web/fetch-api.ts';

const decoded = async (body: ReturnType<typeof bodyToSend>): Promise<string> => {
  const sent = await body;
  return typeof sent === 'string' ? sent : new TextDecoder().decode(sent);
};

describe('bodyToSend', () => {
  it('is the very text an answer was made with, synchronously, when no hook read it', () => {
    const text = '{"data":{"name":"Ünïcode ✓"}}';
    expect(bodyToSend(new Response(text, { status: 200 }))).toBe(text);
  });

  it('is the bytes a hook read: a text answer stays in place, a stream is replaced by an answer over its bytes', async () => {
    const text = new Response('{"a":"é"}');
    let replaced: Response | undefined;
    const read = await readBody(text, (response) => (replaced = response));
    expect(replaced).toBeUndefined();
    expect(read.answer).toBe(text);
    expect(new TextDecoder().decode(read.bytes)).toBe('{"a":"é"}');
    // Its own bytes, not a view into a shared pool that a cache holding them would keep alive.
    expect(read.bytes.byteOffset).toBe(0);
    expect(read.bytes.buffer.byteLength).toBe(read.bytes.byteLength);
    expect(bodyToSend(text)).toBe(read.bytes);
    expect((await readBody(text, () => undefined)).bytes).toBe(read.bytes);

    const streamed = new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('streamed'));
          controller.close();
        },
      }),
    );
    const fromStream = await readBody(streamed, (response) => (replaced = response));
    expect(replaced).toBe(fromStream.answer);
    expect(fromStream.answer).not.toBe(streamed);
    expect(bodyToSend(fromStream.answer)).toBe(fromStream.bytes);
  });

  it('reads a body that is bytes, a stream or none, whole, as a promise', async () => {
    const bytes = bodyToSend(new Response(new TextEncoder().encode('bytes ✓')));
    expect(bytes).toBeInstanceOf(Promise);
    expect(await decoded(bytes)).toBe('bytes ✓');
    // HEAD's answer has none (src/gateway/http-plugins.ts).
    const none = bodyToSend(new Response(null, { status: 200, headers: { 'content-length': '15' } }));
    expect(none).toBeInstanceOf(Promise);
    expect(await decoded(none)).toBe('');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('one, '));
        controller.enqueue(new TextEncoder().encode('two'));
        controller.close();
      },
    });
    const streamed = bodyToSend(new Response(stream));
    expect(streamed).toBeInstanceOf(Promise);
    expect(await decoded(streamed)).toBe('one, two');
  });
});

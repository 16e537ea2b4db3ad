import { createReadStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';

/** A byte stream plus a running count of the bytes that went through it. */
export interface CountedInput {
  stream: Readable;
  bytesRead(): number;
}

/** Opens a file (never `-`: stdin is spooled to a file first) and counts bytes as they are read. */
export function openCounted(path: string, highWaterMark = 256 * 1024): CountedInput {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const source = createReadStream(path, { highWaterMark });
  source.on('error', (err) => counter.destroy(err));
  return { stream: source.pipe(counter), bytesRead: () => bytes };
}

/** Yields the input's text in chunks, decoding UTF-8 across chunk boundaries. */
export async function* textChunks(stream: Readable): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of stream) {
    const text = decoder.decode(chunk as Buffer, { stream: true });
    if (text) yield text;
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}

/** Yields lines with their 1-based numbers (`\n` or `\r\n` endings), without the terminator. */
export async function* textLines(stream: Readable): AsyncGenerator<{ text: string; line: number }> {
  let carry = '';
  let line = 1;
  for await (const chunk of textChunks(stream)) {
    const text = carry + chunk;
    let from = 0;
    for (let nl = text.indexOf('\n', from); nl >= 0; nl = text.indexOf('\n', from)) {
      const end = nl > from && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      yield { text: text.slice(from, end), line: line++ };
      from = nl + 1;
    }
    carry = text.slice(from);
  }
  if (carry) yield { text: carry.endsWith('\r') ? carry.slice(0, -1) : carry, line };
}

import type { Row, RowWriter, WriterOptions } from './types.js';

/**
 * JSON: one array, streamed row by row (a page at a time never holds the whole result), or one
 * object with `single`. Indented on a terminal, one row per line when piped.
 */
export function jsonWriter(opts: WriterOptions): RowWriter {
  const { out } = opts;
  const pretty = out.isTTY;
  const render = (row: Row) => (pretty ? JSON.stringify(row, null, 2) : JSON.stringify(row));
  if (opts.single) {
    return {
      write: (row) => out.write(`${render(row)}\n`),
      end: () => Promise.resolve(),
    };
  }
  let count = 0;
  return {
    async write(row) {
      const text = render(row);
      await out.write(`${count++ === 0 ? '[\n' : ',\n'}${pretty ? text.replace(/^/gm, '  ') : text}`);
    },
    end: () => out.write(count === 0 ? '[]\n' : '\n]\n'),
  };
}

/** NDJSON: one compact JSON object per line. */
export function ndjsonWriter(opts: WriterOptions): RowWriter {
  return {
    write: (row) => opts.out.write(`${JSON.stringify(row)}\n`),
    end: () => Promise.resolve(),
  };
}

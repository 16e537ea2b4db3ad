import type { PageWriter, Row, WriterOptions } from './types.js';

/**
 * JSON: one array, streamed a page at a time (never the whole result in memory), or one object
 * with `single`. Indented on a terminal, one row per line anywhere else (a pipe, a file).
 */
export function jsonWriter(opts: WriterOptions): PageWriter {
  const { out } = opts;
  const pretty = 'isTTY' in out && out.isTTY;
  const render = (row: Row) => (pretty ? JSON.stringify(row, null, 2).replace(/^/gm, '  ') : JSON.stringify(row));
  if (opts.single) {
    return {
      write: async (rows) => {
        for (const row of rows) await out.write(`${pretty ? JSON.stringify(row, null, 2) : JSON.stringify(row)}\n`);
      },
      end: () => Promise.resolve(),
    };
  }
  let count = 0;
  return {
    async write(rows) {
      if (!rows.length) return;
      const text = rows.map(render).join(',\n');
      await out.write(`${count === 0 ? '[\n' : ',\n'}${text}`);
      count += rows.length;
    },
    end: () => out.write(count === 0 ? '[]\n' : '\n]\n'),
  };
}

/** NDJSON: one compact JSON object per line. */
export function ndjsonWriter(opts: WriterOptions): PageWriter {
  return {
    async write(rows) {
      if (rows.length) await opts.out.write(`${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    },
    end: () => Promise.resolve(),
  };
}

import { parse } from 'csv-parse';
import type { RecordReader, SourceRecord } from '../types.js';
import { ImportError } from '../types.js';
import { openCounted } from './input.js';

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Streams a CSV file: the first record is the header; every later record becomes
 * `{ header: cell }` with the cell text exactly as written (quotes removed, nothing trimmed).
 * A record with the wrong number of cells is passed on with `error` set, so it is rejected alone.
 * @example for await (const r of csvReader('a.csv').records()) r.values // { id: '…', name: 'Smith, Jones' }
 */
export function csvReader(path: string, delimiter = ','): RecordReader {
  const input = openCounted(path);
  let headers: string[] | null = null;
  return {
    get headers() {
      return headers;
    },
    bytesRead: input.bytesRead,
    async *records(): AsyncGenerator<SourceRecord> {
      const parser = input.stream.pipe(
        parse({ bom: true, delimiter, info: true, relax_column_count: true, skip_empty_lines: true }),
      );
      let index = 0;
      try {
        for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
          const cells = item.record;
          // csv-parse reports the line a record ends on; a quoted newline inside it moves the start up
          let inner = 0;
          for (const c of cells) if (c.includes('\n')) inner += countNewlines(c);
          const line = item.info.lines - inner;
          if (!headers) {
            headers = cells.map((h) => h);
            const seen = new Set<string>();
            for (const h of headers) {
              if (seen.has(h)) throw new ImportError(`${path}: the header "${h}" appears twice (line ${line})`, 2);
              seen.add(h);
            }
            continue;
          }
          const values: Record<string, unknown> = {};
          const n = Math.min(cells.length, headers.length);
          for (let i = 0; i < n; i++) values[headers[i]] = cells[i];
          const rec: SourceRecord = { index: index++, line, values };
          if (cells.length !== headers.length && !(cells.length === 1 && cells[0] === '')) {
            rec.error = `expected ${headers.length} fields as in the header, found ${cells.length}`;
          }
          yield rec;
        }
      } catch (err) {
        if (err instanceof ImportError) throw err;
        const e = err as Error & { code?: string; lines?: number };
        throw new ImportError(`${path}: CSV is malformed${e.lines ? ` near line ${e.lines}` : ''}: ${e.message}`);
      }
    },
  };
}

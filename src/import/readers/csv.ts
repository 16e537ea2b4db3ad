import type { RecordReader, SourceRecord } from '../types.js';
import { CellRecord, ImportError } from '../types.js';
import { CsvScanner, CsvSyntaxError } from './csv-scan.js';
import { checkSingleHeader } from './delimiter.js';
import { type ByteCheck, clip, MAX_HEADER_BYTES, MAX_RECORD_BYTES, openCounted, textChunks, tooLong } from './input.js';

/**
 * Refuses a header or record that grows past its bound before it ends (a file without line ends,
 * `/dev/zero`, the wrong format), showing only the start of a header.
 */
function checkPending(path: string, scanner: CsvScanner, inHeader: boolean, records: number): void {
  if (inHeader && scanner.pending > MAX_HEADER_BYTES) {
    throw new ImportError(
      `${path}: the header (line 1) is longer than 1 MiB, so this is not a CSV file with a header row (is it the right file and --format?); it starts ${clip(scanner.pendingText(60))}`,
      'usage',
    );
  }
  if (scanner.pending > MAX_RECORD_BYTES) throw tooLong(path, `record ${records + 1}`, scanner.line);
}

/** A CSV record: cells by position, `values` (header → cell) only when something asks; a cell the record lacks is left out. */
class CsvRow extends CellRecord {
  get values(): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    const n = Math.min(this.cells.length, this.headers.length);
    for (let i = 0; i < n; i++) values[this.headers[i]] = this.cells[i];
    return values;
  }
}

/**
 * One record's text (a header's worth of cells) read again as the CSV reader reads it: the
 * import's byte path uses it for the rare row it cannot send as it is (a reject, a JSON row).
 */
export function csvRecordAt(text: string, headers: string[], index: number, line: number, delimiter = ','): SourceRecord {
  const scanner = new CsvScanner(delimiter);
  const recs = [...scanner.push(text), ...scanner.end()];
  const cells = recs[0]?.cells ?? [''];
  const rec: SourceRecord = new CsvRow(index, line, cells, headers);
  if (cells.length !== headers.length) rec.error = `expected ${headers.length} fields as in the header, found ${cells.length}`;
  return rec;
}

/**
 * Streams a CSV file: the first record is the header; every later record becomes
 * `{ header: cell }` with the cell text exactly as written (quotes removed, nothing trimmed).
 * A record with the wrong number of cells is passed on with `error` set, so it is rejected alone.
 * @example for await (const r of csvReader('a.csv').records()) r.values // { id: '…', name: 'Smith, Jones' }
 */
export function csvReader(path: string, delimiter = ',', name = path, check?: ByteCheck, chunkBytes = 64 * 1024): RecordReader {
  const input = openCounted(path, chunkBytes, check);
  path = name; // messages name the input as the user gave it (not a transcoded copy)
  let headers: string[] | null = null;
  return {
    get headers() {
      return headers;
    },
    bytesRead: input.bytesRead,
    async *records(): AsyncGenerator<SourceRecord> {
      const scanner = new CsvScanner(delimiter);
      let index = 0;
      let done = false;
      const chunks = textChunks(input.stream)[Symbol.asyncIterator]();
      try {
        while (!done) {
          const next = await chunks.next();
          done = Boolean(next.done);
          const batch = done ? scanner.end() : scanner.push(next.value as string);
          checkPending(path, scanner, headers === null && batch.length === 0, index);
          for (const { cells, line } of batch) {
            if (!headers) {
              if (cells.some((h) => h.includes('\r'))) {
                // classic Mac line ends: the whole file would read as one header line
                throw new ImportError(
                  `${path}: line 1 ends with a lone carriage return (CR line endings, as old Mac Excel writes): convert the file first, e.g. tr '\\r' '\\n' < ${path} > fixed.csv`,
                  'usage',
                );
              }
              checkSingleHeader(cells, path, delimiter);
              headers = cells;
              const seen = new Set<string>();
              for (const h of headers) {
                if (seen.has(h)) throw new ImportError(`${path}: the header "${h}" appears twice (line ${line})`, 'usage');
                seen.add(h);
              }
              continue;
            }
            const rec: SourceRecord = new CsvRow(index++, line, cells, headers);
            if (cells.length !== headers.length && !(cells.length === 1 && cells[0] === '')) {
              rec.error = `expected ${headers.length} fields as in the header, found ${cells.length}`;
            }
            yield rec;
          }
        }
      } catch (err) {
        if (err instanceof CsvSyntaxError) throw new ImportError(`${path}: CSV is malformed near line ${err.line}: ${err.message}`, 'usage');
        throw err;
      } finally {
        if (!done) await chunks.return?.(undefined);
      }
    },
  };
}

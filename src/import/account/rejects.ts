import { appendFile, rm, stat } from 'node:fs/promises';
import { csvField, csvLine } from '../../format/csv-dialect.js';
import { bomBytes, encodeAs, type Encoding } from '../readers/decode.js';
import { stringifyDeep } from '../../schema/json-depth.js';
import type { SourceRecord } from '../types.js';

/** How a CSV rejects file is written: as the input was (its delimiter, its encoding, its BOM), so a fixed copy imports with the same flags. */
export interface RejectsDialect {
  delimiter: string;
  encoding: Encoding;
  bom: boolean;
}

const PLAIN: RejectsDialect = { delimiter: ',', encoding: 'utf-8', bom: false };

/** A row that did not land, with why. */
export interface Reject {
  record: SourceRecord;
  code: string;
  message: string;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : stringifyDeep(v);
}

/**
 * Appends rejected rows to a file, created on the first reject: CSV (`_line,_code,_message`, then
 * the input's own columns with their original text) for CSV inputs, in the CSV dialect
 * (src/format/csv-dialect.ts) with the input's delimiter and encoding, NDJSON otherwise. The three
 * `_` columns are skipped by import, so a corrected rejects file imports directly.
 */
export class RejectsWriter {
  private started = false;
  count = 0;

  constructor(
    readonly path: string,
    private readonly kind: 'csv' | 'ndjson',
    private readonly headers: () => string[] | null,
    /** Continue an existing file (resume) instead of replacing it. */
    private readonly append: boolean,
    private readonly dialect: RejectsDialect = PLAIN,
  ) {}

  /** Removes a rejects file left by an earlier run, unless resuming. */
  async reset(): Promise<void> {
    if (!this.append) await rm(this.path, { force: true });
  }

  /**
   * Writes a batch's rejects in input order. A CSV row keeps every cell it had (those past the
   * header's too), each as the input's text.
   */
  async write(rejects: Reject[]): Promise<void> {
    if (rejects.length === 0) return;
    rejects.sort((a, b) => a.record.index - b.record.index);
    const d = this.dialect;
    // the CSV dialect (src/format/csv-dialect.ts) with the input's delimiter: one line per record
    const csv = (rows: string[][]) => rows.map((r) => csvLine(r.map((c) => csvField(c, d.delimiter)), d.delimiter)).join('');
    let text = '';
    let bom = false;
    if (!this.started) {
      this.started = true;
      const exists = this.append && (await stat(this.path).then((s) => s.size > 0, () => false));
      if (!exists && this.kind === 'csv') {
        bom = d.bom;
        text += csv([['_line', '_code', '_message', ...(this.headers() ?? [])]]);
      }
    }
    for (const r of rejects) {
      if (this.kind === 'csv') {
        const cells = r.record.cells ?? (this.headers() ?? []).map((h) => cellText(r.record.values[h]));
        text += csv([[String(r.record.line), r.code, r.message, ...cells]]);
      } else {
        text += `${stringifyDeep({ _line: r.record.line, _code: r.code, _message: r.message, ...r.record.values })}\n`;
      }
    }
    this.count += rejects.length;
    const bytes = this.kind === 'csv' ? encodeAs(text, d.encoding) : Buffer.from(text);
    await appendFile(this.path, bom ? Buffer.concat([bomBytes(d.encoding), bytes]) : bytes);
  }
}

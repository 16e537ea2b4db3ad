import { appendFile, rm, stat } from 'node:fs/promises';
import { stringify } from 'csv-stringify/sync';
import type { SourceRecord } from './types.js';

/** A row that did not land, with why. */
export interface Reject {
  record: SourceRecord;
  code: string;
  message: string;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Appends rejected rows to a file, created on the first reject: CSV (`_line,_code,_message`, then
 * the input's own columns with their original text) for CSV inputs, NDJSON otherwise. The three
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
  ) {}

  /** Removes a rejects file left by an earlier run, unless resuming. */
  async reset(): Promise<void> {
    if (!this.append) await rm(this.path, { force: true });
  }

  /** Writes a batch's rejects in input order. */
  async write(rejects: Reject[]): Promise<void> {
    if (rejects.length === 0) return;
    rejects.sort((a, b) => a.record.index - b.record.index);
    let text = '';
    if (!this.started) {
      this.started = true;
      const exists = this.append && (await stat(this.path).then((s) => s.size > 0, () => false));
      if (!exists && this.kind === 'csv') text += stringify([['_line', '_code', '_message', ...(this.headers() ?? [])]]);
    }
    for (const r of rejects) {
      if (this.kind === 'csv') {
        const cells = (this.headers() ?? []).map((h) => cellText(r.record.values[h]));
        text += stringify([[String(r.record.line), r.code, r.message, ...cells]]);
      } else {
        text += `${JSON.stringify({ _line: r.record.line, _code: r.code, _message: r.message, ...r.record.values })}\n`;
      }
    }
    this.count += rejects.length;
    await appendFile(this.path, text);
  }
}

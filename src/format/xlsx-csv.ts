import { CsvTokenizer, ESCAPED, fieldText, QUOTED, TOKENS_MALFORMED, TOKENS_MORE, TOKENS_OK } from './csv-tokens.js';
import type { TextSink } from './types.js';
import { DAY_MS, EPOCH_1900, type OpenSheet, STYLE, textCell, type XlsxOptions, openSheet } from './xlsx.js';

/**
 * An .xlsx workbook fed the CSV export's bytes (the service's COPY output or CSV pages in the CSV
 * dialect, src/format/csv-dialect.ts): rows never become objects and plain text is copied from the
 * CSV bytes into the sheet's XML as bytes, escaped on the way. The cells are the ones xlsxWriter
 * writes from JSON rows (src/format/xlsx.ts): dates as Excel dates, booleans (`t`/`f`) and numbers
 * as themselves, everything else text; an empty unquoted field (a null) an empty cell. Values keep
 * the CSV export's text (timestamps and jsonb as PostgreSQL prints them).
 */

const UNDERSCORE = 95;

/** Whether the character at `i` is whitespace to JavaScript's `\s` (what decides xml:space in textCell). */
function spaceAt(b: Uint8Array, i: number): boolean {
  const c = b[i];
  if (c < 0x80) return c === 32 || (c >= 9 && c <= 13);
  if (c === 0xc2) return b[i + 1] === 0xa0;
  if (c === 0xe1) return b[i + 1] === 0x9a && b[i + 2] === 0x80;
  if (c === 0xe2) return (b[i + 1] === 0x80 && ((b[i + 2] >= 0x80 && b[i + 2] <= 0x8a) || b[i + 2] === 0xa8 || b[i + 2] === 0xa9 || b[i + 2] === 0xaf)) || (b[i + 1] === 0x81 && b[i + 2] === 0x9f);
  if (c === 0xe3) return b[i + 1] === 0x80 && b[i + 2] === 0x80;
  return c === 0xef && b[i + 1] === 0xbb && b[i + 2] === 0xbf;
}

/** The sheet's XML for one chunk, as bytes: grown as it fills (escapes can make a field up to 6× its bytes). */
class XmlBytes {
  buf: Buffer;
  n = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(next, 0, 0, this.n);
    this.buf = next;
  }
  text(s: string): void {
    this.room(s.length * 3);
    this.n += this.buf.write(s, this.n, 'utf8');
  }
  /** Short ASCII bytes (a cell's markup), copied by hand: Buffer.write's call cost more than the copy. */
  bytes(b: Uint8Array): void {
    this.room(b.length);
    const out = this.buf;
    let n = this.n;
    for (let k = 0; k < b.length; k++) out[n++] = b[k];
    this.n = n;
  }
}

const QUOT = Buffer.from('&quot;');
const ENTITY: Record<number, Uint8Array> = { 38: Buffer.from('&amp;'), 60: Buffer.from('&lt;'), 62: Buffer.from('&gt;'), 34: QUOT };

/**
 * Copies a field's text [s, e) into the XML escaped (doubled quotes undoubled when `escaped`);
 * false, with nothing written, when it needs textCell's full treatment: control characters, a
 * literal `_x`, U+FFFE/U+FFFF, or whitespace at an edge (xml:space).
 */
function copyEscaped(x: XmlBytes, b: Uint8Array, s: number, e: number, escaped: boolean): boolean {
  if (s === e || spaceAt(b, s)) return s === e;
  let last = e - 1;
  while (last > s && (b[last] & 0xc0) === 0x80) last--;
  if (spaceAt(b, last)) return false;
  x.room((e - s) * 6);
  const out = x.buf;
  let n = x.n;
  for (let k = s; k < e; k++) {
    const c = b[k];
    if (c < 32 || (c === UNDERSCORE && b[k + 1] === 120) || (c === 0xef && b[k + 1] === 0xbf && b[k + 2] >= 0xbe)) return false;
    const entity = ENTITY[c];
    if (entity !== undefined) {
      // a quoted field's `""` is one quote (the tokenizer flagged it ESCAPED)
      if (entity === QUOT && escaped) k++;
      for (let j = 0; j < entity.length; j++) out[n++] = entity[j];
    } else out[n++] = c;
  }
  x.n = n;
  return true;
}

/** Per column, the bytes before and after a cell's row number (`<c r="B` … `" s="3" t="inlineStr"><is><t>`). */
function cellParts(letters: string[]) {
  const textMid = Buffer.from(`" s="${STYLE.text}" t="inlineStr"><is><t>`);
  return letters.map((l) => ({ ref: `<c r="${l}`, refBytes: Buffer.from(`<c r="${l}`), textMid, date: `" s="${STYLE.date}"><v>`, bool: `" t="b"><v>`, num: `"><v>` }));
}

const TEXT_END = Buffer.from('</t></is></c>');
const ROW_END = Buffer.from('</row>');

/**
 * A typed cell (number, date, boolean) from an unquoted field, or null when the field is not one
 * (then it is text, as xlsxWriter writes a value of the wrong kind).
 */
function typedCell(kind: string, b: Buffer, s: number, e: number, p: ReturnType<typeof cellParts>[number], row: string): string | null {
  if (kind === 'number') {
    const v = Number(b.toString('latin1', s, e));
    return Number.isFinite(v) ? `${p.ref}${row}${p.num}${v}</v></c>` : null;
  }
  if (kind === 'boolean') return e - s === 1 && (b[s] === 116 || b[s] === 102) ? `${p.ref}${row}${p.bool}${b[s] === 116 ? 1 : 0}</v></c>` : null;
  if (kind === 'date' && e - s === 10 && b[s + 4] === 45 && b[s + 7] === 45) {
    const y = Number(b.toString('latin1', s, s + 4));
    const serial = (Date.UTC(y, Number(b.toString('latin1', s + 5, s + 7)) - 1, Number(b.toString('latin1', s + 8, e))) - EPOCH_1900) / DAY_MS;
    return y >= 1900 && serial > 60 ? `${p.ref}${row}${p.date}${serial}</v></c>` : null;
  }
  return null;
}

/** The sheet rows of the whole rows in b[at, …), and where the first cut-off row starts (b.length when none). */
function sheetRows(s: OpenSheet, b: Buffer, at: number, parts: ReturnType<typeof cellParts>, emptyText: boolean, t: CsvTokenizer): { xml: Buffer; used: number } {
  // sheet XML runs about twice the CSV's bytes (tracks: 2.2×)
  const x = new XmlBytes(Math.max(1 << 16, (b.length - at) * 3));
  const n = b.length;
  const width = s.columns.length;
  let used = at;
  while (used < n) {
    const status = t.read(b, used, n, false);
    if (status === TOKENS_MORE) break;
    if (status === TOKENS_MALFORMED) throw new Error(`the CSV export is malformed at row ${s.row + 1}: ${t.problem}`);
    if (t.count > width) throw new Error(`the CSV export has more fields than its ${width} columns (row ${s.row + 1})`);
    s.room(1);
    const row = String(s.row + 1);
    const rowBytes = Buffer.from(row, 'latin1');
    x.text(`<row r="${row}">`);
    for (let col = 0; col < t.count; col++) {
      const quoted = (t.flags[col] & QUOTED) !== 0;
      const fs = t.from(col);
      const fe = t.to(col);
      if (t.starts[col] === t.ends[col]) {
        if (emptyText) x.text(textCell(`${s.letters[col]}${row}`, '', STYLE.text));
        continue;
      }
      const p = parts[col];
      const typed = quoted || s.kinds[col] === 'text' ? null : typedCell(s.kinds[col], b, fs, fe, p, row);
      if (typed !== null) {
        x.text(typed);
        continue;
      }
      const mark = x.n;
      x.bytes(p.refBytes);
      x.bytes(rowBytes);
      x.bytes(p.textMid);
      const escaped = (t.flags[col] & ESCAPED) !== 0;
      if (copyEscaped(x, b, fs, fe, escaped)) x.bytes(TEXT_END);
      else {
        x.n = mark;
        x.text(textCell(`${s.letters[col]}${row}`, fieldText(b, fs, fe, escaped), STYLE.text));
      }
    }
    x.bytes(ROW_END);
    s.row++;
    used = t.next;
  }
  return { xml: x.buf.subarray(0, x.n), used };
}

/**
 * A sink for the CSV export's bytes (its header line first, then whole rows in the CSV dialect)
 * that writes them into an .xlsx workbook as they come; `end()` closes the workbook. Past Excel's
 * 1,048,576 rows it stops with an error.
 * @example const w = await xlsxCsvWriter(out, { table }); await w.write(csvBytes); await w.end();
 */
export async function xlsxCsvWriter(out: TextSink, opts: XlsxOptions): Promise<TextSink & { end(): Promise<void> }> {
  const s = await openSheet(out, opts);
  const parts = cellParts(s.letters);
  // --null '': a null is an empty field, written (as xlsxWriter does) as an empty text cell
  const emptyText = opts.nullToken === '';
  const tokens = new CsvTokenizer();
  let header = true;
  let carry: Buffer | null = null;
  return {
    async write(chunk) {
      let b = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (carry) b = Buffer.concat([carry, b]);
      carry = null;
      let at = 0;
      if (header) {
        if (tokens.read(b, 0, b.length, false) !== TOKENS_OK) return void (carry = Buffer.from(b));
        at = tokens.next;
        header = false;
      }
      const { xml, used } = sheetRows(s, b, at, parts, emptyText, tokens);
      // the caller may reuse its buffer: a cut-off row is copied
      if (used < b.length) carry = Buffer.from(b.subarray(used));
      if (xml.length) await s.sheet.write(xml);
    },
    async end() {
      if (carry) throw new Error('the CSV export ended inside a row');
      await s.end();
    },
  };
}

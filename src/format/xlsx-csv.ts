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

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const UNDERSCORE = 95;

// TODO(tok): use the shared tokenizer
/**
 * Where the CSV-dialect field that starts at `i` ends: after its closing quote, or at the comma or
 * LF after it; -1 when `buf` ends inside it (a row cut by the chunk's end).
 * @example csvFieldEnd(Buffer.from('"a,b",c\n'), 0, 8) // 5
 */
export function csvFieldEnd(buf: Uint8Array, i: number, n: number): number {
  if (i < n && buf[i] === QUOTE) {
    for (let j = i + 1; ; ) {
      const q = buf.indexOf(QUOTE, j);
      if (q < 0 || q + 1 >= n) return -1;
      if (buf[q + 1] !== QUOTE) return q + 1;
      j = q + 2;
    }
  }
  for (let k = i; k < n; k++) if (buf[k] === COMMA || buf[k] === LF) return k;
  return -1;
}

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

const ENTITY: Record<number, Uint8Array> = { 38: Buffer.from('&amp;'), 60: Buffer.from('&lt;'), 62: Buffer.from('&gt;'), 34: Buffer.from('&quot;') };

/**
 * Copies a field's text [s, e) into the XML escaped (a quoted field's doubled quotes undoubled);
 * false, with nothing written, when it needs textCell's full treatment: control characters, a
 * literal `_x`, U+FFFE/U+FFFF, or whitespace at an edge (xml:space).
 */
function copyEscaped(x: XmlBytes, b: Uint8Array, s: number, e: number, quoted: boolean): boolean {
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
    if (c === 38 || c === 60 || c === 62 || c === QUOTE) {
      if (c === QUOTE && quoted) k++;
      const entity = ENTITY[c];
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
function sheetRows(s: OpenSheet, b: Buffer, at: number, parts: ReturnType<typeof cellParts>, emptyText: boolean): { xml: Buffer; used: number } {
  // sheet XML runs about twice the CSV's bytes (tracks: 2.2×)
  const x = new XmlBytes(Math.max(1 << 16, (b.length - at) * 3));
  const n = b.length;
  const width = s.columns.length;
  let used = at;
  rows: while (used < n) {
    s.room(1);
    const row = String(s.row + 1);
    const rowBytes = Buffer.from(row, 'latin1');
    const start = x.n;
    x.text(`<row r="${row}">`);
    let i = used;
    for (let col = 0; ; col++) {
      const e = csvFieldEnd(b, i, n);
      if (e < 0) {
        x.n = start;
        break rows;
      }
      if (col >= width) throw new Error(`the CSV export has more fields than its ${width} columns (row ${row})`);
      const quoted = b[i] === QUOTE;
      const p = parts[col];
      if (i === e) {
        if (emptyText) x.text(textCell(`${s.letters[col]}${row}`, '', STYLE.text));
      } else {
        const typed = quoted || s.kinds[col] === 'text' ? null : typedCell(s.kinds[col], b, i, e, p, row);
        if (typed !== null) x.text(typed);
        else {
          const mark = x.n;
          x.bytes(p.refBytes);
          x.bytes(rowBytes);
          x.bytes(p.textMid);
          const fs = quoted ? i + 1 : i;
          const fe = quoted ? e - 1 : e;
          if (copyEscaped(x, b, fs, fe, quoted)) x.bytes(TEXT_END);
          else {
            x.n = mark;
            const value = b.toString('utf8', fs, fe);
            x.text(textCell(`${s.letters[col]}${row}`, quoted ? value.replaceAll('""', '"') : value, STYLE.text));
          }
        }
      }
      i = e;
      if (b[i] === LF) break;
      i++;
    }
    x.bytes(ROW_END);
    s.row++;
    used = i + 1;
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
  let header = true;
  let carry: Buffer | null = null;
  return {
    async write(chunk) {
      let b = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (carry) b = Buffer.concat([carry, b]);
      carry = null;
      let at = 0;
      if (header) {
        for (let e = csvFieldEnd(b, at, b.length); e >= 0 && at < b.length; e = csvFieldEnd(b, at, b.length)) {
          at = e + 1;
          if (b[e] === LF) break;
        }
        if (at === 0 || b[at - 1] !== LF) return void (carry = Buffer.from(b));
        header = false;
      }
      const { xml, used } = sheetRows(s, b, at, parts, emptyText);
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

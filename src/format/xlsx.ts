import type { ColumnDef } from '../schema/catalog.js';
import { DEFAULT_NULL_TOKEN, knownDefault } from '../schema/conventions.js';
import type { TableDef } from '../schema/catalog.js';
import type { PageWriter, TextSink } from './types.js';
import { type ZipWriter, zipWriter } from './zip.js';

/**
 * Writes .xlsx by hand, streaming: the sheet's XML is deflated into the zip a page at a time
 * (src/format/zip.ts), strings are inline (no shared-string table to hold), so memory
 * stays flat at any row count. Measured against exceljs' streaming writer on 300k tracks: see
 * BENCHMARKS.md.
 */

/** Excel's last row: a sheet holds 1,048,576 rows, the header one of them. */
export const EXCEL_MAX_ROWS = 1_048_576;

/** Styles (cellXfs): 0 plain, 1 bold header, 2 date yyyy-mm-dd, 3 text (`@`: what is typed later stays text). */
export const STYLE = { plain: 0, header: 1, date: 2, text: 3 } as const;

const STYLES_XML =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
  '<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts>' +
  '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>' +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
  '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>' +
  '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
  '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>' +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>';

function packageParts(sheetName: string): Array<[string, string]> {
  const head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  return [
    [
      '[Content_Types].xml',
      `${head}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`,
    ],
    ['_rels/.rels', `${head}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`],
    [
      'xl/workbook.xml',
      `${head}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${rel}"><sheets><sheet name="${xmlText(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `${head}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${rel}/styles" Target="styles.xml"/></Relationships>`,
    ],
    ['xl/styles.xml', STYLES_XML],
  ];
}

/**
 * Text as XML character data: markup escaped, characters XML 1.0 cannot hold (control
 * characters) and a literal `_xHHHH_` written in OOXML's `_xHHHH_` form, so they read back as they were.
 * @example xmlText('a<b') // 'a&lt;b'
 */
export function xmlText(s: string): string {
  if (!/[&<>"\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|_x[0-9a-fA-F]{4}_/.test(s)) return s;
  return s
    .replace(/_(x[0-9a-fA-F]{4}_)/g, '_x005F_$1')
    .replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, (c) => `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`);
}

/** A column's letters: 0 → A, 26 → AA. */
export function columnName(i: number): string {
  let s = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

const NUMERIC = /^(integer|bigint|smallint|numeric|real|double)/;
export const DAY_MS = 86_400_000;
/** Excel's day 0 in its 1900 date system (serials past 60 count from here: Excel's 1900-02-29 is a day that never was). */
export const EPOCH_1900 = Date.UTC(1899, 11, 30);

export type Kind = 'date' | 'boolean' | 'number' | 'text';
export const kindOf = (c: ColumnDef | undefined): Kind => (c?.type === 'date' ? 'date' : c?.type === 'boolean' ? 'boolean' : c && NUMERIC.test(c.type) ? 'number' : 'text');

/** An inline-string cell (space kept: xml:space only when it matters). */
export function textCell(ref: string, s: string, style: number): string {
  const t = xmlText(s);
  const space = /^\s|\s$|\n/.test(s) ? ' xml:space="preserve"' : '';
  return `<c r="${ref}" s="${style}" t="inlineStr"><is><t${space}>${t}</t></is></c>`;
}

/**
 * One cell of a column: dates as Excel dates (serials with the date format), booleans and numbers
 * as themselves, every other column (identifiers, UPCs, ISRCs, text, timestamps with their zone,
 * JSON) as text so Excel never turns it into a number. Null is an empty cell where an empty cell
 * imports as null, and `\N` where it would take a non-null default, as in CSV exports.
 */
function cell(ref: string, kind: Kind, col: ColumnDef | undefined, v: unknown, nullToken: string | undefined): string {
  if (v === null || v === undefined) {
    const token = nullToken ?? (col && knownDefault(col) !== null ? DEFAULT_NULL_TOKEN : null);
    return token === null ? '' : textCell(ref, token, STYLE.text);
  }
  if (kind === 'date' && typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v)) {
    const serial = (Date.parse(`${v}T00:00:00Z`) - EPOCH_1900) / DAY_MS;
    if (serial > 60) return `<c r="${ref}" s="${STYLE.date}"><v>${serial}</v></c>`;
  }
  if (kind === 'boolean' && typeof v === 'boolean') return `<c r="${ref}" t="b"><v>${v ? 1 : 0}</v></c>`;
  if (kind === 'number' && typeof v === 'number' && Number.isFinite(v)) return `<c r="${ref}"><v>${v}</v></c>`;
  return textCell(ref, typeof v === 'object' ? JSON.stringify(v) : String(v), STYLE.text);
}

export interface XlsxOptions {
  table: TableDef;
  /** Column order; default every column of the table. */
  columns?: string[];
  /** Text for SQL null, as CSV writes it (see src/format/csv-dialect.ts). */
  nullToken?: string;
}

/** An open workbook: its sheet's columns and what kind of cell each takes, the sheet entry being written, and rows so far (the header is row 1). */
export interface OpenSheet {
  columns: string[];
  cols: Array<ColumnDef | undefined>;
  kinds: Kind[];
  letters: string[];
  sheet: Awaited<ReturnType<ZipWriter['entry']>>;
  zip: ZipWriter;
  row: number;
  /** Throws past Excel's last row when `more` rows are added. */
  room(more: number): void;
  end(): Promise<void>;
}

/** Starts a workbook: the package's parts, then the sheet up to its header row (bold, frozen); text columns carry the Text format. */
export async function openSheet(out: TextSink, opts: XlsxOptions): Promise<OpenSheet> {
  const columns = opts.columns ?? opts.table.columns.map((c) => c.name);
  const byName = new Map(opts.table.columns.map((c) => [c.name, c]));
  const cols = columns.map((c) => byName.get(c));
  const kinds = cols.map(kindOf);
  const letters = columns.map((_, i) => columnName(i));
  const zip = zipWriter(out);
  for (const [name, text] of packageParts(opts.table.name.slice(0, 31))) {
    const part = await zip.entry(name);
    await part.write(text);
    await part.close();
  }
  const sheet = await zip.entry('xl/worksheets/sheet1.xml');
  const widths = columns.map((name, i) => `<col min="${i + 1}" max="${i + 1}" width="${Math.min(40, Math.max(10, name.length + 2))}" customWidth="1"${kinds[i] === 'date' ? ` style="${STYLE.date}"` : kinds[i] === 'text' ? ` style="${STYLE.text}"` : ''}/>`);
  const header = columns.map((name, i) => textCell(`${letters[i]}1`, name, STYLE.header)).join('');
  await sheet.write(
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
      '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>' +
      `<cols>${widths.join('')}</cols><sheetData><row r="1">${header}</row>`,
  );
  const open: OpenSheet = {
    columns,
    cols,
    kinds,
    letters,
    sheet,
    zip,
    row: 1,
    room(more) {
      if (this.row + more > EXCEL_MAX_ROWS) throw new Error(`an Excel sheet holds at most ${EXCEL_MAX_ROWS.toLocaleString('en-US')} rows (the header one of them): narrow the export with --where or --limit, or use CSV`);
    },
    async end() {
      await sheet.write('</sheetData></worksheet>');
      await sheet.close();
      await zip.end();
    },
  };
  return open;
}

/**
 * Streams rows read as JSON into an .xlsx workbook (one sheet named after the table): a bold,
 * frozen header row; text columns carry the Text format; dates are Excel dates. Re-importable as
 * is. Past Excel's 1,048,576 rows it stops with an error (the file is not kept). A CSV export's
 * bytes take xlsxCsvWriter (src/format/xlsx-csv.ts) instead.
 * @example const w = await xlsxWriter(out, { table }); await w.write(rows); await w.end();
 */
export async function xlsxWriter(out: TextSink, opts: XlsxOptions): Promise<PageWriter> {
  const s = await openSheet(out, opts);
  const { columns, kinds, cols, letters } = s;
  return {
    async write(rows) {
      s.room(rows.length);
      // one string per page, joined once (concatenating cell by cell left the collector most of the work)
      const parts: string[] = [];
      for (const r of rows) {
        const row = ++s.row;
        parts.push(`<row r="${row}">`);
        for (let i = 0; i < columns.length; i++) parts.push(cell(`${letters[i]}${row}`, kinds[i], cols[i], r[columns[i]], opts.nullToken));
        parts.push('</row>');
      }
      if (parts.length) await s.sheet.write(parts.join(''));
    },
    end: () => s.end(),
  };
}

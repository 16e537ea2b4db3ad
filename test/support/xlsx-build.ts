import { constants, crc32, deflateRawSync } from 'node:zlib';
import { writeZip } from './xlsx-bomb.js';

/**
 * Workbooks made by hand for the reader's tests: any part's XML as given (prefixed, single-quoted,
 * malformed, hostile), zipped. `repeatedPart` makes a part that inflates to gigabytes from a
 * file of a megabyte, in milliseconds: the body is deflated once with a full flush (so its
 * compressed bytes stand alone) and those bytes are repeated.
 */

/** A zip entry: its deflated bytes, CRC, real size and (to make a lying directory) the size recorded. */
export interface ZipPart {
  name: string;
  data: Buffer;
  crc: number;
  size: number;
  /** The uncompressed size the central directory claims (default: the real one). */
  declared?: number;
}

/** A part from its text. */
export function part(name: string, text: string | Buffer): ZipPart {
  const raw = typeof text === 'string' ? Buffer.from(text) : text;
  return { name, data: deflateRawSync(raw), crc: crc32(raw), size: raw.length };
}

/** A part whose text is `head`, then `body` `times` times, then `tail`, deflated without ever holding the whole. */
export function repeatedPart(name: string, head: string, body: string, times: number, tail: string): ZipPart {
  const flushed = (b: Buffer) => deflateRawSync(b, { finishFlush: constants.Z_FULL_FLUSH });
  const [h, b, t] = [head, body, tail].map((s) => Buffer.from(s));
  const seg = flushed(b);
  let crc = crc32(h);
  for (let i = 0; i < times; i++) crc = crc32(b, crc);
  crc = crc32(t, crc);
  // a final empty block (fixed Huffman, end of block) closes the stream
  const data = Buffer.concat([flushed(h), ...Array.from({ length: times }, () => seg), flushed(t), Buffer.from([0x03, 0x00])]);
  return { name, data, crc, size: h.length + b.length * times + t.length };
}

/** Writes the parts as a zip (the central directory records `declared` sizes where given). */
export function zipParts(path: string, parts: ZipPart[]): void {
  writeZip(
    path,
    parts.map((p) => ({ ...p, size: p.declared ?? p.size })),
  );
}

export const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
export const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const TYPES_NS = 'http://schemas.openxmlformats.org/package/2006/content-types';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/** How a test workbook is put together: its sheets' XML (whole parts), shared strings, styles, and the prefix of its main namespace. */
export interface BookSpec {
  sheets: Array<{ name: string; xml: string }>;
  /** The whole sharedStrings.xml, if any. */
  sharedStrings?: string;
  /** The whole styles.xml (default: style 1 is a date). */
  styles?: string;
  /** Write the workbook part with this prefix (`x` as the Open XML SDK does); '' for none. */
  prefix?: string;
  date1904?: boolean;
  /** Extra parts, or parts replacing the made ones (same name). */
  extra?: ZipPart[];
}

/** A styles part: cell style 0 plain, 1 a built-in date (14), 2 a date-time code, 3 text. */
export const STYLES = `${XML_HEAD}<styleSheet xmlns="${MAIN_NS}"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd hh:mm"/></numFmts><cellXfs count="4"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="164" applyNumberFormat="1"/><xf numFmtId="49"/></cellXfs></styleSheet>`;

/** The parts of a workbook from its spec, in Excel's order (the workbook before its sheets). */
export function bookParts(spec: BookSpec): ZipPart[] {
  const x = spec.prefix ? `${spec.prefix}:` : '';
  const ns = spec.prefix ? `xmlns:${spec.prefix}="${MAIN_NS}"` : `xmlns="${MAIN_NS}"`;
  const sheetList = spec.sheets.map((s, i) => `<${x}sheet name="${s.name.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('');
  const rels = spec.sheets.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${REL_NS}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`);
  const n = spec.sheets.length;
  rels.push(`<Relationship Id="rId${n + 1}" Type="${REL_NS}/styles" Target="styles.xml"/>`);
  if (spec.sharedStrings) rels.push(`<Relationship Id="rId${n + 2}" Type="${REL_NS}/sharedStrings" Target="sharedStrings.xml"/>`);
  const parts = [
    part('[Content_Types].xml', `${XML_HEAD}<Types xmlns="${TYPES_NS}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/></Types>`),
    part('_rels/.rels', `${XML_HEAD}<Relationships xmlns="${PKG_REL_NS}"><Relationship Id="rId1" Type="${REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`),
    part('xl/workbook.xml', `${XML_HEAD}<${x}workbook ${ns} xmlns:r="${REL_NS}"><${x}workbookPr${spec.date1904 ? ' date1904="1"' : ''}/><${x}sheets>${sheetList}</${x}sheets></${x}workbook>`),
    part('xl/_rels/workbook.xml.rels', `${XML_HEAD}<Relationships xmlns="${PKG_REL_NS}">${rels.join('')}</Relationships>`),
    part('xl/styles.xml', spec.styles ?? STYLES),
    ...(spec.sharedStrings ? [part('xl/sharedStrings.xml', spec.sharedStrings)] : []),
    ...spec.sheets.map((s, i) => part(`xl/worksheets/sheet${i + 1}.xml`, s.xml)),
  ];
  const extra = spec.extra ?? [];
  return [...parts.filter((p) => !extra.some((e) => e.name === p.name)), ...extra];
}

/** Writes a workbook from its spec. */
export function writeBook(path: string, spec: BookSpec): void {
  zipParts(path, bookParts(spec));
}

/** A sheet part around rows' XML (`<row>` elements), with the given prefix and anything after the rows (`<mergeCells>`). */
export function sheetXml(rows: string, o: { prefix?: string; after?: string } = {}): string {
  const x = o.prefix ? `${o.prefix}:` : '';
  const ns = o.prefix ? `xmlns:${o.prefix}="${MAIN_NS}"` : `xmlns="${MAIN_NS}"`;
  return `${XML_HEAD}<${x}worksheet ${ns}><${x}sheetData>${rows}</${x}sheetData>${o.after ?? ''}</${x}worksheet>`;
}

/** Inline-string cells for a row: `row(3, ['a', 'b'])` → `<row r="3"><c r="A3" t="inlineStr">…`; '' leaves a cell out. */
export function textRow(r: number, cells: string[]): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const cs = cells.map((v, i) => (v === '' ? '' : `<c r="${String.fromCharCode(65 + i)}${r}" t="inlineStr"><is><t>${esc(v)}</t></is></c>`)).join('');
  return `<row r="${r}">${cs}</row>`;
}

import { writeFileSync } from 'node:fs';
import * as zlib from 'node:zlib';
import { constants, deflateRawSync } from 'node:zlib';
import { crc32 as jsCrc32, writeZip } from './xlsx-bomb.js';

/** zlib's CRC-32 (Node 20.15+), else the JavaScript one (engines allow Node 20.10). */
const crc32 = (data: Buffer, value = 0): number => ((zlib as { crc32?: (d: Buffer, v?: number) => number }).crc32 ? zlib.crc32(data, value) : jsCrc32(value, data));

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

/**
 * A part made of segments, each `[text, times]`: its text repeated, deflated once with a full
 * flush (so its compressed bytes stand alone) and those bytes repeated. A gigabyte in a megabyte,
 * in milliseconds, without ever holding the whole.
 */
export function repeatedPart(name: string, segments: Array<[string, number]>): ZipPart {
  const chunks: Buffer[] = [];
  let crc = 0;
  let size = 0;
  for (const [text, times] of segments) {
    const raw = Buffer.from(text);
    const seg = deflateRawSync(raw, { finishFlush: constants.Z_FULL_FLUSH });
    for (let i = 0; i < times; i++) {
      crc = crc32(raw, crc);
      chunks.push(seg);
    }
    size += raw.length * times;
  }
  // a final empty block (fixed Huffman, end of block) closes the stream
  chunks.push(Buffer.from([0x03, 0x00]));
  return { name, data: Buffer.concat(chunks), crc, size };
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

const MB_OF_A = 'a'.repeat(1024 * 1024);

/**
 * The hostile workbooks of issue 37, each small on disk. `honest`: the zip's directory records
 * the real inflated sizes (the reader refuses them from the directory); otherwise it claims a few
 * kilobytes (the reader refuses them when they inflate past that).
 */
export const HOSTILE = {
  /** Ten shared strings of 50 MB each (500 MB of text) in a ~0.5 MB file. */
  strings(path: string, honest: boolean): void {
    const segments: Array<[string, number]> = [[`<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN_NS}" count="11" uniqueCount="11"><si><t>release_title</t></si>`, 1]];
    for (let i = 0; i < 10; i++) segments.push(['<si><t>', 1], [MB_OF_A, 50], ['</t></si>', 1]);
    segments.push(['</sst>', 1]);
    const sst = repeatedPart('xl/sharedStrings.xml', segments);
    const sheet = sheetXml(Array.from({ length: 11 }, (_, i) => `<row r="${i + 1}"><c r="A${i + 1}" t="s"><v>${i}</v></c></row>`).join(''));
    writeBook(path, { sheets: [{ name: 'S', xml: sheet }], sharedStrings: '<sst/>', extra: [{ ...sst, declared: honest ? undefined : 4096 }] });
  },
  /** A styles part of 1 GB (a font, then a gigabyte of white space) in a ~1 MB file. */
  styles(path: string, honest: boolean): void {
    const head = `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${MAIN_NS}"><fonts count="1"><font><sz val="11"/></font>`;
    const styles = repeatedPart('xl/styles.xml', [[head, 1], [' '.repeat(MB_OF_A.length), 1024], ['</fonts><cellXfs><xf numFmtId="0"/></cellXfs></styleSheet>', 1]]);
    writeBook(path, { sheets: [{ name: 'S', xml: sheetXml(textRow(1, ['release_title']) + textRow(2, ['Blue'])) }], extra: [{ ...styles, declared: honest ? undefined : 4096 }] });
  },
  /** A row of 150,000 unclosed `<c>` (a ~2 KB file). */
  cells(path: string): void {
    writeBook(path, { sheets: [{ name: 'S', xml: sheetXml(`${textRow(1, ['release_title'])}<row r="2">${'<c>'.repeat(150_000)}</row>`) }] });
  },
  /** 22 bytes: an end-of-central-directory record claiming a 4 GiB directory. */
  directory(path: string): void {
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(1, 8);
    end.writeUInt16LE(1, 10);
    end.writeUInt32LE(0xfffffffe, 12);
    writeFileSync(path, end);
  },
};

/** A cell value for `prefixedBook`: text (shared), `{ inline }` text, `{ rich }` runs, a number, a boolean, a date (a serial with a date style), empty. */
export type CellValue = string | number | boolean | Date | null | { inline: string } | { rich: string[] } | { formula: string; value?: string };

const xmlText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The serial Excel stores for a date-time (1900 date system), read as UTC wall time. */
export function excelSerial(d: Date): number {
  return (d.getTime() - Date.UTC(1899, 11, 30)) / 86_400_000;
}

/**
 * A workbook as the Open XML SDK writes it: every element of the main namespace prefixed (`x:`),
 * text in the shared-string table (rich runs for `{ rich }`), attributes single-quoted where the
 * SDK's serializer is configured so, dates as serials under a date style (a time of day under a
 * date-time style), `<x:v/>` for an empty formula result.
 */
export function prefixedBook(path: string, sheets: Array<{ name: string; rows: CellValue[][] }>): void {
  const strings: string[] = [];
  const shared = (si: string) => {
    strings.push(si);
    return strings.length - 1;
  };
  const cell = (v: CellValue, ref: string): string => {
    if (v === null) return '';
    if (typeof v === 'string') return `<x:c r='${ref}' t='s'><x:v>${shared(`<x:t xml:space='preserve'>${xmlText(v)}</x:t>`)}</x:v></x:c>`;
    if (typeof v === 'number') return `<x:c r="${ref}"><x:v>${v}</x:v></x:c>`;
    if (typeof v === 'boolean') return `<x:c r="${ref}" t="b"><x:v>${v ? 1 : 0}</x:v></x:c>`;
    if (v instanceof Date) return `<x:c r='${ref}' s='${v.getUTCHours() || v.getUTCMinutes() ? 2 : 1}'><x:v>${excelSerial(v)}</x:v></x:c>`;
    if ('inline' in v) return `<x:c r="${ref}" t="inlineStr"><x:is><x:t>${xmlText(v.inline)}</x:t></x:is></x:c>`;
    if ('rich' in v) return `<x:c r='${ref}' t='s'><x:v>${shared(v.rich.map((t, i) => `<x:r>${i ? '<x:rPr><x:b/></x:rPr>' : ''}<x:t xml:space='preserve'>${xmlText(t)}</x:t></x:r>`).join(''))}</x:v></x:c>`;
    return `<x:c r="${ref}"><x:f>${xmlText(v.formula)}</x:f>${v.value === undefined ? '<x:v/>' : `<x:v>${v.value}</x:v>`}</x:c>`;
  };
  const col = (i: number) => String.fromCharCode(65 + i);
  const xml = sheets.map((s) => ({
    name: s.name,
    xml: sheetXml(s.rows.map((row, r) => `<x:row r='${r + 1}'>${row.map((v, i) => cell(v, `${col(i)}${r + 1}`)).join('')}</x:row>`).join(''), { prefix: 'x' }),
  }));
  const sst = `${XML_HEAD}<x:sst xmlns:x="${MAIN_NS}" count="${strings.length}" uniqueCount="${strings.length}">${strings.map((s) => `<x:si>${s}</x:si>`).join('')}</x:sst>`;
  const styles = STYLES.replace(/<(\/?)(\w+)/g, '<$1x:$2').replace(`xmlns="${MAIN_NS}"`, `xmlns:x="${MAIN_NS}"`).replace('<x:?xml', '<?xml');
  writeBook(path, { prefix: 'x', sheets: xml, sharedStrings: sst, styles });
}

import { closeSync, openSync, writeSync } from 'node:fs';
import { deflateRawSync, constants } from 'node:zlib';
import { createDeflateRaw } from 'node:zlib';

/**
 * Hand-made .xlsx workbooks whose sheet inflates far past their size: one row whose cell holds
 * `cellBytes` of text (inline, or through the shared-string table), written as a stream so the
 * test never holds the text. A 65 MiB cell makes a file of well under 1 MB.
 */

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32(crc: number, buf: Buffer): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** Deflates the parts one after another (as a stream would), with their CRC and sizes. */
async function deflateParts(parts: Iterable<Buffer>): Promise<{ data: Buffer; crc: number; size: number }> {
  const deflate = createDeflateRaw({ level: constants.Z_BEST_COMPRESSION });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((r) => deflate.on('end', r));
  let crc = 0;
  let size = 0;
  for (const p of parts) {
    crc = crc32(crc, p);
    size += p.length;
    if (!deflate.write(p)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  return { data: Buffer.concat(out), crc, size };
}

function* repeated(text: string, bytes: number): Generator<Buffer> {
  const block = Buffer.from(text.repeat(Math.ceil((1024 * 1024) / text.length)).slice(0, 1024 * 1024));
  for (let left = bytes; left > 0; left -= block.length) yield left >= block.length ? block : block.subarray(0, left);
}

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`;
const RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`;
const WORKBOOK = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`;
const WORKBOOK_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`;

const SHEET_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>';
const SHEET_TAIL = '</sheetData></worksheet>';

/**
 * Writes a workbook: a header row `name`, a row "ok", then row 3 with a cell of `cellBytes`
 * bytes of text (`where`: inline in the sheet, or as shared string 2), then a row "after".
 */
export async function hugeCellXlsx(path: string, cellBytes: number, where: 'inline' | 'shared'): Promise<void> {
  const cell = (row: number, text: string) => `<row r="${row}"><c r="A${row}" t="inlineStr"><is><t>${text}</t></is></c></row>`;
  const sheetParts: Buffer[] | Generator<Buffer> = (function* () {
    yield Buffer.from(SHEET_HEAD + cell(1, 'stage_name') + cell(2, 'ok'));
    if (where === 'inline') {
      yield Buffer.from('<row r="3"><c r="A3" t="inlineStr"><is><t>');
      yield* repeated('huge ', cellBytes);
      yield Buffer.from('</t></is></c></row>');
    } else yield Buffer.from('<row r="3"><c r="A3" t="s"><v>0</v></c></row>');
    yield Buffer.from(cell(4, 'after') + SHEET_TAIL);
  })();
  const shared = (function* () {
    yield Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>');
    if (where === 'shared') yield* repeated('huge ', cellBytes);
    else yield Buffer.from('small');
    yield Buffer.from('</t></si></sst>');
  })();
  const entries: Array<{ name: string; data: Buffer; crc: number; size: number }> = [];
  for (const [name, text] of [['[Content_Types].xml', CONTENT_TYPES], ['_rels/.rels', RELS], ['xl/workbook.xml', WORKBOOK], ['xl/_rels/workbook.xml.rels', WORKBOOK_RELS]] as const) {
    const raw = Buffer.from(text);
    entries.push({ name, data: deflateRawSync(raw), crc: crc32(0, raw), size: raw.length });
  }
  entries.push({ name: 'xl/sharedStrings.xml', ...(await deflateParts(shared)) });
  entries.push({ name: 'xl/worksheets/sheet1.xml', ...(await deflateParts(sheetParts)) });
  writeZip(path, entries);
}

export function writeZip(path: string, entries: Array<{ name: string; data: Buffer; crc: number; size: number }>): void {
  const fd = openSync(path, 'w');
  let offset = 0;
  const central: Buffer[] = [];
  const write = (b: Buffer) => {
    writeSync(fd, b);
    offset += b.length;
  };
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(e.crc, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(name.length, 26);
    const at = offset;
    write(local);
    write(name);
    write(e.data);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(8, 10);
    c.writeUInt32LE(e.crc, 16);
    c.writeUInt32LE(e.data.length, 20);
    c.writeUInt32LE(e.size, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(at, 42);
    central.push(c, name);
  }
  const dir = Buffer.concat(central);
  const dirOffset = offset;
  write(dir);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(dirOffset, 16);
  write(end);
  closeSync(fd);
}

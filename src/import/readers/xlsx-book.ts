import { entryChunks, type EntryOptions, type ZipEntry, ZipError } from './zip-reader.js';
import { parseXml, prefixedAttr, XmlError, type XmlEvents } from './xml.js';

/**
 * The parts of a workbook around its sheets, read with the streaming XML parser (xml.ts): the
 * relationships that say where each part lives, the sheet list and date system (workbook.xml),
 * which cell styles show dates (styles.xml) and the shared-string table. Each part is bounded
 * before it is read: its recorded size against the limit below (a larger one is refused before
 * one byte is inflated), and its actual bytes against its recorded size (zip-reader.ts).
 */

const MiB = 1024 * 1024;

/**
 * The largest uncompressed size of each part this reader reads whole. Shared strings are held in
 * memory (as Excel holds them), so their table is bounded in total; the others are read as a
 * stream, keeping only the few facts wanted, but parsing a gigabyte of styles would still take
 * a minute. Real workbooks sit far below: 300k rows of eight text columns saved by Excel make
 * ~60 MiB of shared strings, a styles part at Excel's 64,000-format ceiling ~15 MiB.
 */
export const PART_LIMITS = {
  relationships: 16 * MiB,
  workbook: 64 * MiB,
  styles: 64 * MiB,
  sharedStrings: 256 * MiB,
} as const;

/**
 * The most items a part may list, so that a part within its size cannot make the reader hold
 * more than its text: Excel allows 64,000 cell formats; sheets and relationships are far fewer in
 * any real workbook; 16,777,216 shared strings (64 MiB of index) is sixteen times a full sheet's
 * column of unique text.
 */
export const ITEM_LIMITS = { formats: 65_536, sheets: 65_536, relationships: 65_536, strings: 16_777_216 } as const;

/** The refusal of a part listing more than its items' limit. */
function tooMany(part: string, what: keyof typeof ITEM_LIMITS): XmlError {
  return new XmlError(`${part} lists more than ${ITEM_LIMITS[what].toLocaleString('en-US')} ${what === 'formats' ? 'cell formats' : what === 'strings' ? 'shared strings' : what}`);
}

/** A sheet of the workbook: its name as Excel shows it and its part in the zip. */
export interface SheetRef {
  name: string;
  path: string;
}

/** What reading a sheet's cells needs from the rest of the workbook. */
export interface Workbook {
  sheets: SheetRef[];
  /** The shared-string table's part, if any (read by readStrings). */
  stringsPath?: string;
  stylesPath?: string;
  strings: StringTable;
  /** Per cell style (`s`): whether its number format shows a date. */
  dateStyles: boolean[];
  date1904: boolean;
}

/** Built-in number formats that show a date or time (ECMA-376 18.8.30). */
const DATE_FORMAT_IDS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58]);

/** Whether a number format shows a date: a built-in date format, or a code with d/m/y/h/s outside quotes and brackets. */
export function isDateFormat(id: number, code: string | undefined): boolean {
  if (DATE_FORMAT_IDS.has(id)) return true;
  if (!code) return false;
  const bare = code.replace(/"[^"]*"|\[[^\]]*\]|\\./g, '');
  return /[dmyhs]/i.test(bare) && !/^[#0.,%E+\- ]*$/.test(bare);
}

/** OOXML's `_xHHHH_` escapes in cell text (`_x000D_` a carriage return; `_x005F_` escapes a literal `_`). */
export function unescapeOoxml(s: string): string {
  return s.includes('_x') ? s.replace(/_x([0-9a-fA-F]{4})_/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))) : s;
}

/**
 * The shared-string table, held compactly: the strings' UTF-8 bytes one after another in one
 * buffer, and where each ends. A JS string costs ~60 bytes past its text (a 100k-row sheet's
 * 300k strings took 70 MB as an array, 20 MB here); a string is decoded again when a cell asks.
 * Never larger than the part's recorded size: text is never longer than the XML that holds it.
 */
export class StringTable {
  private buf: Buffer;
  private ends = new Uint32Array(1024);
  private used = 0;
  length = 0;

  constructor(capacity: number) {
    // untouched pages cost no memory: the buffer is the part's size, filled as strings arrive
    this.buf = Buffer.allocUnsafe(Math.max(capacity, 0));
  }

  /** Adds a string; false when the table is full (ITEM_LIMITS.strings). */
  push(s: string): boolean {
    if (this.length >= ITEM_LIMITS.strings) return false;
    if (this.length === this.ends.length) {
      const more = new Uint32Array(this.ends.length * 2);
      more.set(this.ends);
      this.ends = more;
    }
    this.used += this.buf.write(s, this.used);
    this.ends[this.length++] = this.used;
    return true;
  }

  /** String `i`, or undefined past the end. */
  get(i: number): string | undefined {
    if (!(i >= 0 && i < this.length)) return undefined;
    return this.buf.toString('utf8', i === 0 ? 0 : this.ends[i - 1], this.ends[i]);
  }
}

/** A part's path from a relationship target (relative to `base`'s folder, or absolute from the root). */
export function resolvePart(base: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = base.split('/').slice(0, -1);
  for (const seg of target.split('/')) {
    if (seg === '..') parts.pop();
    else if (seg !== '.' && seg !== '') parts.push(seg);
  }
  return parts.join('/');
}

/** How the book's parts are read: the zip's entries, the file, the stop. */
export interface BookSource {
  file: string;
  entries: Map<string, ZipEntry>;
  signal?: AbortSignal;
}

/** Streams a part through `events` within its limit; false when stopped; a part the zip lacks is `missing`. */
async function readPart(src: BookSource, path: string, kind: keyof typeof PART_LIMITS, events: XmlEvents): Promise<boolean | 'missing'> {
  const entry = src.entries.get(path);
  if (!entry) return 'missing';
  const o: EntryOptions = { limit: PART_LIMITS[kind], signal: src.signal, tooBig: (n) => partTooBig(path, kind, n) };
  return parseXml(path, entryChunks(src.file, entry, o), events, src.signal);
}

/** The refusal of a part over its limit. */
export function partTooBig(path: string, kind: keyof typeof PART_LIMITS, size: number): string {
  const what = kind === 'sharedStrings' ? "the workbook's shared strings (its cells' text)" : `its ${kind === 'relationships' ? 'relationships' : kind} part`;
  const tail = kind === 'sharedStrings' ? ': save the sheet as CSV and import that' : '';
  return `${what}, ${path}, would be ${Math.ceil(size / MiB)} MiB uncompressed, over the ${PART_LIMITS[kind] / MiB} MiB this reader takes${tail}`;
}

/** Relationships of a part: id → [type, resolved target]. */
async function relations(src: BookSource, path: string, base: string): Promise<Map<string, [string, string]> | null> {
  const out = new Map<string, [string, string]>();
  const events: XmlEvents = {
    open(name, a) {
      if (name !== 'Relationship' || !a.Id || !a.Target || a.TargetMode === 'External') return;
      if (out.size >= ITEM_LIMITS.relationships) throw tooMany(path, 'relationships');
      out.set(a.Id, [a.Type ?? '', resolvePart(base, a.Target)]);
    },
    close() {},
  };
  const read = await readPart(src, path, 'relationships', events);
  return read === false ? null : out;
}

/** The sheet list and date system of workbook.xml (read up to the end of its `<sheets>`). */
async function sheetList(src: BookSource, bookPath: string, rels: Map<string, [string, string]>): Promise<{ sheets: SheetRef[]; date1904: boolean } | null> {
  const sheets: SheetRef[] = [];
  let date1904 = false;
  const events = {
    done: false,
    open(name: string, a: Record<string, string>) {
      if (name === 'workbookPr') date1904 = a.date1904 === '1' || a.date1904 === 'true';
      if (name !== 'sheet') return;
      const id = prefixedAttr(a, 'id');
      const path = id ? rels.get(id)?.[1] : undefined;
      if (sheets.length >= ITEM_LIMITS.sheets) throw tooMany(bookPath, 'sheets');
      if (path) sheets.push({ name: a.name ?? '', path });
    },
    close(name: string) {
      if (name === 'sheets') events.done = true;
    },
  };
  const read = await readPart(src, bookPath, 'workbook', events);
  if (read === 'missing') throw new ZipError(`it has no workbook part (${bookPath})`);
  return read ? { sheets, date1904 } : null;
}

/**
 * The workbook's sheet list, date system and where its styles and shared strings live, whatever
 * the order of its zip entries; null when `signal` stopped it.
 */
export async function readBook(src: BookSource): Promise<Workbook | null> {
  const root = await relations(src, '_rels/.rels', '');
  if (!root) return null;
  const bookPath = [...root.values()].find(([type]) => type.endsWith('/officeDocument'))?.[1] ?? 'xl/workbook.xml';
  const relsPath = `${bookPath.replace(/[^/]*$/, '')}_rels/${bookPath.split('/').pop()}.rels`;
  const rels = await relations(src, relsPath, bookPath);
  if (!rels) return null;
  const list = await sheetList(src, bookPath, rels);
  if (!list) return null;
  const ofType = (suffix: string) => [...rels.values()].find(([type]) => type.endsWith(suffix))?.[1];
  return { ...list, stringsPath: ofType('/sharedStrings'), stylesPath: ofType('/styles'), strings: new StringTable(0), dateStyles: [] };
}

/** Which cell styles show a date: `<numFmt>`s, then `<cellXfs>` (read up to its end). False when stopped. */
export async function readStyles(src: BookSource, book: Workbook): Promise<boolean> {
  const path = book.stylesPath;
  if (!path) return true;
  const codes = new Map<number, string>();
  let inXfs = false;
  const events = {
    done: false,
    open(name: string, a: Record<string, string>) {
      if (codes.size >= ITEM_LIMITS.formats || book.dateStyles.length >= ITEM_LIMITS.formats) throw tooMany(path, 'formats');
      if (name === 'numFmt') codes.set(Number(a.numFmtId), a.formatCode ?? '');
      else if (name === 'cellXfs') inXfs = true;
      else if (name === 'xf' && inXfs) {
        const id = Number(a.numFmtId ?? 0);
        book.dateStyles.push(isDateFormat(id, codes.get(id)));
      }
    },
    close(name: string) {
      if (name === 'cellXfs') events.done = true;
    },
  };
  return (await readPart(src, path, 'styles', events)) !== false;
}

/** The shared-string table (`<si>` items: plain or rich text, phonetic hints left out). False when stopped. */
export async function readStrings(src: BookSource, book: Workbook): Promise<boolean> {
  const entry = book.stringsPath ? src.entries.get(book.stringsPath) : undefined;
  if (!book.stringsPath || !entry) return true;
  const strings = (book.strings = new StringTable(Math.min(entry.size, PART_LIMITS.sharedStrings)));
  let item: string | null = null;
  let inText = false;
  let phonetic = 0;
  const events: XmlEvents = {
    open(name) {
      if (name === 'si') item = '';
      else if (name === 'rPh') phonetic++;
      else if (name === 't' && item !== null && phonetic === 0) inText = true;
    },
    close(name) {
      if (name === 't') inText = false;
      else if (name === 'rPh') phonetic--;
      else if (name === 'si' && item !== null) {
        if (!strings.push(unescapeOoxml(item))) throw tooMany(entry.name, 'strings');
        item = null;
      }
    },
    text(t) {
      if (inText) item += t;
    },
  };
  return (await readPart(src, book.stringsPath, 'sharedStrings', events)) !== false;
}

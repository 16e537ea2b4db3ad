import { readFile } from 'node:fs/promises';
import type { Query } from '../../grammar/types.js';
import { type CsvRecord, CsvScanner, CsvSyntaxError } from '../../import/readers/csv-scan.js';
import { normalizeUuid } from '../../schema/codecs.js';
import { inListChunks } from '../../client/in-list.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import type { TableDef } from '../../schema/model.js';

/**
 * `remove --file ids.csv`: the rows named by a file's column of ids, or of keys (a header naming
 * a field: `isrc_code`, `name`), which are matched as an import matches them (src/import/match/keys.ts).
 * Returns the removals as `id=in.(…)` queries that each fit a URL.
 */

/** The file's column: its header (null when the first line is already an id) and its values with their lines. */
function columnOf(text: string, file: string): { header: string | null; values: Array<{ value: string; line: number }> } {
  // the import's CSV reader (the one tokenizer): a BOM dropped, blank lines skipped, each record's line kept
  let rows: CsvRecord[];
  try {
    const scanner = new CsvScanner();
    rows = [...scanner.push(text), ...scanner.end()];
  } catch (err) {
    if (err instanceof CsvSyntaxError) throw new UsageError(`${file} line ${err.line}: ${err.message}`);
    throw err;
  }
  if (rows.length === 0) throw new UsageError(`${file} is empty: give one id (or key) a line`);
  const first = rows[0].cells.map((c) => c.trim());
  const header = normalizeUuid(first[0] ?? '') !== null ? null : first;
  const at = header ? Math.max(0, header.indexOf('id')) : 0;
  if (header && header.length > 1 && !header.includes('id')) throw new UsageError(`${file} has several columns and none is "id": give one column of ids or keys`);
  const values = rows.slice(header ? 1 : 0).map((r) => ({ value: (r.cells[at] ?? '').trim(), line: r.line })).filter((v) => v.value !== '');
  return { header: header ? header[at] : null, values };
}

/** The ids a file names: its ids as they are, or its keys matched to the stored records. */
export async function idsFromFile(file: string, table: TableDef, ctx: Context): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  const { header, values } = columnOf(text, file);
  if (header === null || header === 'id') {
    const bad = values.find((v) => normalizeUuid(v.value) === null);
    if (bad) throw new UsageError(`${file} line ${bad.line}: ${JSON.stringify(bad.value)} is not an id (a uuid)`, 'a column of keys needs a header naming the field, e.g. isrc_code');
    const ids = [...new Set(values.map((v) => normalizeUuid(v.value)!))];
    // an id no record has refuses the removal as an unknown key does (a stale or mistyped list)
    const stored = await storedIds(ids, table, ctx);
    refuseMissing(file, 'id', table, values.filter((v) => !stored.has(normalizeUuid(v.value)!)));
    return ids;
  }
  if (!table.columns.some((f) => f.name === header)) throw new UsageError(`${file}: the header "${header}" is no field of ${table.name}`, 'name the column id, or the key field (isrc_code, name, …)');
  const [{ KeyIndex, keyText }, { contextTransport }] = await Promise.all([import('../../import/match/keys.js'), import('../transport.js')]);
  const index = await KeyIndex.load(await contextTransport(ctx), table.name, [[header]]);
  const ids = new Set<string>();
  const missing: Array<{ value: string; line: number }> = [];
  for (const v of values) {
    const key = keyText([header], [v.value]);
    const hit = key === null ? null : index.find(0, key);
    if (hit === null) missing.push(v);
    else if ('ambiguous' in hit) throw new UsageError(`${file} line ${v.line}: ${header} “${v.value}” names ${hit.ambiguous.length} ${table.name}: ${hit.ambiguous.join(', ')}`, 'name those by id');
    else ids.add(index.idOf(hit.slot));
  }
  refuseMissing(file, header, table, missing);
  return [...ids];
}

/** A file's values that name no record refuse the whole removal, the first few named with their lines. */
function refuseMissing(file: string, field: string, table: TableDef, missing: ReadonlyArray<{ value: string; line: number }>): void {
  if (missing.length === 0) return;
  const named = missing.slice(0, 5).map((v) => `line ${v.line} “${v.value}”`);
  throw new UsageError(`${file}: ${missing.length} ${field} value${missing.length > 1 ? 's match' : ' matches'} no ${table.name}: ${named.join(', ')}${missing.length > 5 ? ' …' : ''}; nothing removed`);
}

/** Which of the ids the service has (read in lists that fit a URL). */
async function storedIds(ids: string[], table: TableDef, ctx: Context): Promise<Set<string>> {
  const [{ compileQuery }, { pathOf }] = await Promise.all([import('../../grammar/compile.js'), import('./shared.js')]);
  const found = new Set<string>();
  for (const q of idQueries(ids)) {
    const res = await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery({ ...q, select: [{ type: 'field', field: { name: 'id', jsonPath: [] } }] }) });
    if (!res) continue;
    for (const r of JSON.parse(res.body || '[]') as Array<{ id: string }>) found.add(String(r.id).toLowerCase());
  }
  return found;
}

/** `id=in.(…)` queries of the ids, each under the URL limit. */
export function idQueries(ids: string[]): Query[] {
  const field = { name: 'id', jsonPath: [] };
  return [...inListChunks(ids, 40, Number.MAX_SAFE_INTEGER)].map((part) => ({
    where: [{ path: [], condition: { kind: 'filter' as const, field, negated: false, op: 'in' as const, value: part } }],
    order: [],
    page: [],
  }));
}

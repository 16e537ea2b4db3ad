#!/usr/bin/env node
/**
 * The direct-SQL peer: what a user would write instead of `catalog tracks import` — read the
 * CSV, send batches of 1,000 rows as one JSON parameter and upsert them with json_to_recordset.
 *   node bench/peers/direct-sql.js --url postgres://... --file tracks.csv [--batch 1000]
 * Prints `{"rows":N,"ms":T}` (T = time after connecting) on stdout.
 */
import { createReadStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parse } from 'csv-parse';
import { TRACK_COLUMNS } from '../lib/generate.js';

/** The upsert statement for the tracks columns: text in, cast per column, merge on id. */
export function upsertSql(columns = TRACK_COLUMNS) {
  const names = columns.map(([c]) => c);
  const casts = columns.map(([c, t]) => (t === 'text' ? `r.${c}` : `r.${c}::${t}`));
  const updates = names.filter((c) => c !== 'id').map((c) => `${c} = excluded.${c}`);
  return `insert into tracks (${names.join(', ')})
select ${casts.join(', ')} from json_to_recordset($1::json) as r(${names.map((c) => `${c} text`).join(', ')})
on conflict (id) do update set ${updates.join(', ')}`;
}

/** Upserts every row of a CSV file through `query(sql, params)`, `batch` rows per statement. */
export async function upsertFile(query, file, batch = 1000) {
  const sql = upsertSql();
  const parser = createReadStream(file).pipe(parse({ columns: true, relax_quotes: false }));
  let rows = [];
  let total = 0;
  for await (const rec of parser) {
    // COPY semantics: an unquoted empty cell is NULL (the generator never writes quoted empties).
    for (const k in rec) if (rec[k] === '') rec[k] = null;
    rows.push(rec);
    if (rows.length === batch) {
      await query(sql, [JSON.stringify(rows)]);
      total += rows.length;
      rows = [];
    }
  }
  if (rows.length) {
    await query(sql, [JSON.stringify(rows)]);
    total += rows.length;
  }
  return total;
}

async function main() {
  const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: args.url });
  await client.connect();
  const t = performance.now();
  const rows = await upsertFile((sql, params) => client.query(sql, params), args.file, Number(args.batch ?? 1000));
  const ms = performance.now() - t;
  await client.end();
  process.stdout.write(`${JSON.stringify({ rows, ms })}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    process.stderr.write(`direct-sql: ${err.message}\n`);
    process.exit(1);
  });
}

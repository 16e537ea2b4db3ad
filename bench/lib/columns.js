/** A CSV file without some of its columns, cached beside it (the keyed and links scenarios' inputs). */
import { createReadStream, createWriteStream, existsSync, renameSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';

/** `file` without the columns `drop` names, written once to `file` with `suffix` before `.csv`. */
export async function withoutColumns(file, suffix, drop) {
  const out = file.replace(/\.csv$/, `-${suffix}.csv`);
  if (existsSync(out)) return out;
  const tmp = `${out}.${process.pid}.tmp`;
  let keep = null;
  await pipeline(
    createReadStream(file),
    parse(),
    async function* (rows) {
      for await (const row of rows) {
        keep ??= row.map((c, i) => (drop.has(c) ? -1 : i)).filter((i) => i >= 0);
        yield keep.map((i) => row[i]);
      }
    },
    stringify(),
    createWriteStream(tmp),
  );
  renameSync(tmp, out);
  return out;
}

/**
 * What the two DBA peers of a keyed re-import share (staging-upsert.js, staging-merge.js): one
 * connection, one transaction, the file COPYed into a temporary staging table shaped like
 * tracks; then the peer's one statement (`write(client, columns)`, answering its row count).
 * Prints `{"ms":…,"inserted_or_updated":…}`.
 */
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';

/** Runs a peer from its command line: `--url postgres://… --file tracks-keyed.csv`. */
export async function runStagedPeer(write) {
  const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
  const url = arg('--url');
  const file = arg('--file');
  const started = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const header = await new Promise((resolve, reject) => {
      let text = '';
      createReadStream(file, { encoding: 'utf8', end: 64 * 1024 })
        .on('data', (d) => (text += d))
        .on('end', () => resolve(text.split('\n')[0].trim()))
        .on('error', reject);
    });
    const cols = header.split(',');
    const list = cols.join(', ');
    await client.query('begin');
    await client.query(`create temp table staging on commit drop as select ${list} from tracks with no data`);
    await pipeline(createReadStream(file), client.query(copyStreams.from(`copy staging (${list}) from stdin with (format csv, header true)`)));
    const rows = await write(client, cols);
    await client.query('commit');
    process.stdout.write(`${JSON.stringify({ ms: Math.round(performance.now() - started), inserted_or_updated: rows })}\n`);
  } finally {
    await client.end();
  }
}

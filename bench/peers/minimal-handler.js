#!/usr/bin/env node
/**
 * The minimal handler the service's throughput is compared with: node:http, one fixed SQL that
 * builds the page's JSON inside the database (as PostgREST does), the text written as the body.
 * No parsing, no planning, no validation: the floor for "HTTP + the same query".
 *   node bench/peers/minimal-handler.js --port P (--url postgres://... | --dir PGLITE_DIR) [--tx]
 * --tx wraps each query in BEGIN/COMMIT on a pooled client (to measure what a transaction per
 * request costs; the bench's figure is without it).
 * Prints `listening http://127.0.0.1:P` when ready.
 */
import { createServer } from 'node:http';
import { PAGE_SQL } from '../lib/page.js';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));

let run;
if (args.url) {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: args.url, max: Number(args.pool ?? 10) });
  run = 'tx' in args
    ? async () => {
        const c = await pool.connect();
        try {
          await c.query('begin');
          const body = (await c.query(PAGE_SQL)).rows[0].body;
          await c.query('commit');
          return body;
        } finally {
          c.release();
        }
      }
    : async () => (await pool.query(PAGE_SQL)).rows[0].body;
} else {
  const { openPGlite } = await import('../../dist/store/pglite.js');
  const store = await openPGlite({ dataDir: args.dir });
  run = async () => (await store.db.query(PAGE_SQL)).rows[0].body;
}

const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  run().then(
    (body) => {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    },
    (err) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(String(err.message));
    },
  );
});
server.listen(Number(args.port ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
